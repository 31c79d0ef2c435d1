package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCopyBackDropsTheValuesOfTheRouteReplaced: a request a ServeMux
// further out routed ("/t/{tenant}/") is routed again by the ServeMux the
// middleware wraps, to a pattern without {tenant} ("GET /t/acme/health"),
// or to none (a 404 sets no pattern). A router serving the request itself
// replaces its pattern and the path values with it: the caller reads no
// tenant after. The copy-back gave the caller the new pattern alone when
// the new pattern's values were those it had (none here), and the caller
// still read tenant "acme" under a pattern that has no such wildcard.
func TestCopyBackDropsTheValuesOfTheRouteReplaced(t *testing.T) {
	for _, target := range []string{"/t/acme/health", "/t/acme/nothing"} {
		t.Run(target, func(t *testing.T) {
			var got [2]string
			for i, wrapped := range []bool{false, true} {
				inner := http.NewServeMux()
				inner.HandleFunc("GET /t/acme/health", func(http.ResponseWriter, *http.Request) {})
				var h http.Handler = inner
				if wrapped {
					store, clock := newStore(t)
					m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithClock(clock))
					h = m.Handler(inner)
				}
				outer := http.NewServeMux()
				outer.HandleFunc("/t/{tenant}/", func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(w, r)
					got[i] = fmt.Sprintf("pattern %q, tenant %q", r.Pattern, r.PathValue("tenant"))
				})
				outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
			}
			if got[1] != got[0] {
				t.Errorf("the caller read %s, want %s (as without the middleware)", got[1], got[0])
			}
		})
	}
}
