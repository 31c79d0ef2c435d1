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

// TestHeadByMethodOnARouteIsAHeadRoute: a policy on the method HEAD with a
// route "/x" (WithMethods("HEAD"), WithRoutes("/x")) says what a route
// "HEAD /x" says, and so takes HEAD requests to /x from the Set's GET
// route "GET /x" as that route does (see Set.Match): a HEAD request must
// be under the same policies whichever spelling the HEAD policy uses,
// through chi (r.Get and r.Head, or r.Get alone under chi's GetHead) and
// ServeMux (with a HEAD pattern or without), with the policy on "GET /x"
// alone or on the method GET too, and with the HEAD policy also on GET.
func TestHeadByMethodOnARouteIsAHeadRoute(t *testing.T) {
	type router struct {
		name string
		h    func(http.Handler) http.Handler
	}
	routers := []router{
		{"chi, r.Get and r.Head", func(h http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Method("GET", "/x", h)
			r.Method("HEAD", "/x", h)
			return r
		}},
		{"ServeMux, GET and HEAD", func(h http.Handler) http.Handler {
			m := http.NewServeMux()
			m.Handle("GET /x", h)
			m.Handle("HEAD /x", h)
			return m
		}},
		{"ServeMux, GET", func(h http.Handler) http.Handler {
			m := http.NewServeMux()
			m.Handle("GET /x", h)
			return m
		}},
	}
	gets := [][]policy.Option{
		{policy.WithRoutes("GET /x")},
		{policy.WithMethods("GET"), policy.WithRoutes("/x")},
	}
	// Each pair spells one HEAD policy two ways: a route on HEAD, and the
	// method HEAD on a route without one.
	heads := [][2][]policy.Option{
		{{policy.WithRoutes("HEAD /x")}, {policy.WithMethods("HEAD"), policy.WithRoutes("/x")}},
		{{policy.WithRoutes("HEAD /x", "GET /x")}, {policy.WithMethods("HEAD", "GET"), policy.WithRoutes("/x")}},
	}
	for _, rt := range routers {
		for gi, getOpts := range gets {
			for hi, pair := range heads {
				masks := make([]uint64, 2)
				for k, headOpts := range pair {
					get := policy.Must(policy.PerMinute("get", 5, remoteKey, getOpts...))
					head := policy.Must(policy.PerMinute("head", 5, remoteKey, headOpts...))
					s, err := policy.NewSet([]*policy.Policy{get, head})
					if err != nil {
						t.Fatal(err)
					}
					ran := false
					h := rt.h(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						masks[k], ran = s.Match(r), true
					}))
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("HEAD", "/x", nil))
					if !ran {
						t.Fatalf("%s: HEAD /x: no route ran", rt.name)
					}
				}
				if masks[0] != masks[1] || masks[0]&2 == 0 {
					t.Errorf("%s, GET policy %d, HEAD policy %d: HEAD /x under policies %b spelled with a route on HEAD, %b with the method HEAD (bit 1: get, 2: head)",
						rt.name, gi, hi, masks[0], masks[1])
				}
			}
		}
	}
}
