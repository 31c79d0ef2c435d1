package middleware_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestIETFMostConstrainingAfterGiveBack: a policy whose count
// ([policy.CountIf]) leaves out successes gives its unit back once a
// handler that wrote nothing returns, and the RateLimit line reports the
// give-back (see TestCountIfHeadersReportGiveBack). Under
// IETFMostConstraining the one member must then be that of the most
// constraining policy as the decisions stand after it: "fails" (3 a
// minute, given back) is at r=3 again while "all" (3 a minute) has 2
// left, so the member is all's, as IETF writes it ("fails";r=3;t=0,
// "all";r=2;t=60); not fails', chosen before the give-back (a tie of
// two r=2), which would tell the client of a full quota. Through chi
// and a ServeMux, fake clock.
func TestIETFMostConstrainingAfterGiveBack(t *testing.T) {
	silent := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	want := []string{`"all";r=2;t=60`, `"all";r=1;t=60`, `"all";r=0;t=60`}
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			store, clock := newStore(t)
			onlyFailures := policy.CountIf(func(_ *http.Request, status int) bool { return status >= 400 })
			m := middleware.MustNew(store, []*policy.Policy{
				fixed("fails", 3, time.Minute, remote, onlyFailures),
				fixed("all", 3, time.Minute, remote),
			}, middleware.WithClock(clock), middleware.WithHeaders(middleware.IETFMostConstraining))
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(m.Handler)
				r.Get("/", silent)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /", silent)
				h = m.Handler(mux)
			}
			for i, rl := range want {
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK {
					t.Errorf("request %d: status %d, want 200", i+1, w.Code)
				}
				if got := w.Header().Values("RateLimit"); !slices.Equal(got, []string{rl}) {
					t.Errorf("request %d: RateLimit %q, want %q", i+1, got, []string{rl})
				}
				if got, want := w.Header().Values("RateLimit-Policy"), []string{`"fails";q=3;w=60, "all";q=3;w=60`}; !slices.Equal(got, want) {
					t.Errorf("request %d: RateLimit-Policy %q, want %q", i+1, got, want)
				}
			}
		})
	}
}
