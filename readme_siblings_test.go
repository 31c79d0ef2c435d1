package ratekeeper_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReadmeSiblingRoutesShareName: the README says that two middlewares
// side by side, on sibling routes, whose policies have one name and Spec
// count a client's requests to both routes together (the name and Spec are
// the policy's place in the store), and that names of their own (or the
// route in the key) count them apart. A new user's per-route helper, perIP(3) on /a and on /b, gave a
// client 3 a minute on both together, where a limit per route was meant.
func TestReadmeSiblingRoutesShareName(t *testing.T) {
	if readme := strings.Join(strings.Fields(readmeText(t)), " "); !strings.Contains(readme, "(`TestReadmeSiblingRoutesShareName` runs it)") ||
		!strings.Contains(readme, "give a client 3 a minute on both together, not 3 on each") {
		t.Error("README does not say that sibling middlewares' policies of one name and Spec count together")
	}
	ip := keyfunc.Must(keyfunc.IP())
	codes := func(name func(route string) string, key keyfunc.Func) []int {
		_, store := clockedStore(t)
		perIP := func(route string) func(http.Handler) http.Handler {
			return middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute(name(route), 3, key))}).Handler
		}
		r := chi.NewRouter()
		r.With(perIP("a")).Get("/a", hello)
		r.With(perIP("b")).Get("/b", hello)
		var got []int
		for _, path := range []string{"/a", "/a", "/b", "/b"} {
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			got = append(got, w.Code)
		}
		return got
	}
	perIP := func(string) string { return "per-ip" }
	if got := codes(perIP, ip); got[3] != http.StatusTooManyRequests {
		t.Errorf("one name on both routes: %v, want the fourth request (the second to /b) refused 429", got)
	}
	if got := codes(func(route string) string { return "per-ip-" + route }, ip); got[3] != http.StatusOK {
		t.Errorf("a name per route: %v, want all 200", got)
	}
	if got := codes(perIP, keyfunc.Must(keyfunc.Join(ip, keyfunc.Route()))); got[3] != http.StatusOK {
		t.Errorf("one name, keyed by the route too: %v, want all 200", got)
	}
}
