package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestGetByMethodOnARouteIsAGetRoute: a policy on the method GET with a
// route "/x" (WithMethods("GET"), WithRoutes("/x"); in a file, methods:
// [GET] with routes: [/x]) says what a route "GET /x" says, and covers
// HEAD as that route does: not a HEAD request that the router sends to
// its HEAD route for /x (ServeMux's "HEAD /x", chi's r.Head("/x")), which
// the Set's policy on "HEAD /x" limits. Each policy is named after the
// route it limits, whose handler records its name: a request must be
// under that policy alone, whichever spelling the GET policy uses,
// through the whole Set and through each policy's own Applies.
func TestGetByMethodOnARouteIsAGetRoute(t *testing.T) {
	spellings := map[string][]policy.Option{
		"methods GET, route /x": {policy.WithMethods("GET"), policy.WithRoutes("/x")},
		"route GET /x":          {policy.WithRoutes("GET /x")},
	}
	for spelling, opts := range spellings {
		get := policy.Must(policy.PerMinute("get", 5, remoteKey, opts...))
		head := policy.Must(policy.PerMinute("head", 5, remoteKey, policy.WithRoutes("HEAD /x")))
		ps := []*policy.Policy{get, head}
		s, err := policy.NewSet(ps)
		if err != nil {
			t.Fatal(err)
		}
		var mask, applies uint64
		ran := ""
		handler := func(name string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mask, ran = s.Match(r), name
				for i, p := range ps {
					if p.Applies(r, policy.RoutePattern(r)) {
						applies |= 1 << i
					}
				}
			})
		}
		mux := http.NewServeMux()
		mux.Handle("GET /x", handler("get"))
		mux.Handle("HEAD /x", handler("head"))
		cr := chi.NewRouter()
		cr.Method("GET", "/x", handler("get"))
		cr.Method("HEAD", "/x", handler("head"))
		for router, h := range map[string]http.Handler{"ServeMux": mux, "chi": cr} {
			for _, method := range []string{"GET", "HEAD"} {
				mask, applies, ran = 0, 0, ""
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/x", nil))
				if ran == "" {
					t.Fatalf("%s: %s /x: no route ran", router, method)
				}
				var got, alone, want []string
				for i, p := range ps {
					if mask&(1<<i) != 0 {
						got = append(got, p.Name())
					}
					if applies&(1<<i) != 0 {
						alone = append(alone, p.Name())
					}
					if p.Name() == ran {
						want = append(want, p.Name())
					}
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s, %s: %s /x, served by route %q: under %q, want %q", spelling, router, method, ran, got, want)
				}
				if router == "ServeMux" && strings.Join(alone, ",") != strings.Join(want, ",") {
					t.Errorf("%s, %s: %s /x, served by route %q: Applies for %q, want %q", spelling, router, method, ran, alone, want)
				}
			}
		}
	}
}
