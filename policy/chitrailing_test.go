package policy_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiRouteWithTrailingSlash: a route written as it was registered with
// chi, trailing slash included ("POST /login/" for r.Post("/login/"), "GET
// /api/" for the root of r.Route("/api")), applies to it, though chi
// reports the pattern without the slash ("/login", "/api"). Such a policy
// never applied, silently: every request escaped it. A HEAD route so
// written takes HEAD from the GET one of its path, as with the pattern
// chi reports. Three placements: after routing (r.With), in the top-level
// r.Use with ChiPattern, and around the whole router from outside with
// ChiPattern (http.ListenAndServe(addr, m.Handler(r)), as one wraps a
// ServeMux with ServeMuxPattern). The last failed too: the Set told chi's
// patterns by chi's route context in the request, which chi makes only
// once the request reaches it.
func TestChiRouteWithTrailingSlash(t *testing.T) {
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login/")))
	api := policy.Must(policy.PerMinute("api", 5, remoteKey, policy.WithRoutes("GET /api/", "GET /x/")))
	head := policy.Must(policy.PerMinute("head", 5, remoteKey, policy.WithRoutes("HEAD /x/")))
	for _, place := range []string{"r.With", "r.Use", "outside"} {
		r := chi.NewRouter()
		var opts []policy.SetOption
		if place != "r.With" {
			opts = append(opts, policy.WithPatternFunc(policy.ChiPattern(r)))
		}
		s, err := policy.NewSet([]*policy.Policy{login, api, head}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var masks []uint64
		mw := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				masks = append(masks, s.Match(req))
				next.ServeHTTP(w, req)
			})
		}
		nop := func(http.ResponseWriter, *http.Request) {}
		var reg chi.Router = r
		switch place {
		case "r.Use":
			r.Use(mw)
		case "r.With":
			reg = r.With(mw)
		}
		reg.Post("/login/", nop)
		reg.Get("/x/", nop)
		reg.Head("/x/", nop)
		r.Route("/api", func(sub chi.Router) {
			if place == "r.With" {
				sub = sub.With(mw)
			}
			sub.Get("/", nop)
		})
		var h http.Handler = r
		if place == "outside" {
			h = mw(r)
		}
		for _, req := range []*http.Request{
			httptest.NewRequest("POST", "/login/", nil),
			httptest.NewRequest("GET", "/api/", nil),
			httptest.NewRequest("GET", "/x/", nil),
			httptest.NewRequest("HEAD", "/x/", nil),
		} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("%s: %s %s: status %d", place, req.Method, req.URL.Path, w.Code)
			}
		}
		if want := []uint64{1, 2, 2, 4}; !slices.Equal(masks, want) {
			t.Errorf("%s: masks %v, want %v", place, masks, want)
		}
	}
}

// TestServeMuxTrailingSlashRoutesApart: under ServeMux, "/static/" (a
// subtree) and "/static" (one path) are two routes, reported as written:
// a policy on one does not apply to the other.
func TestServeMuxTrailingSlashRoutesApart(t *testing.T) {
	p := policy.Must(policy.PerMinute("static", 5, remoteKey, policy.WithRoutes("GET /static/")))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var masks []uint64
	h := func(w http.ResponseWriter, req *http.Request) { masks = append(masks, s.Match(req)) }
	mux.HandleFunc("GET /static/", h)
	mux.HandleFunc("GET /static", h)
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/static/a", nil))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/static", nil))
	if want := []uint64{1, 0}; !slices.Equal(masks, want) {
		t.Errorf("masks %v, want %v", masks, want)
	}
}
