package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestServeMuxMountedInChi: a ServeMux mounted in a chi router (a legacy
// mux under r.Mount, with http.StripPrefix) reports its own patterns, as
// registered: "GET /x" is its exact route and "GET /x/" its subtree, two
// routes. A policy written with a trailing slash matches chi's trimmed
// pattern only where the pattern is chi's; here chi's route context is in
// the request (chi routed it to the mount) but the pattern is the mux's,
// so the subtree's policy must not apply to the exact route, nor a HEAD
// route on the subtree take HEAD from the exact GET route. Each policy is
// named after the route it limits and the handler of that route records
// its name: a request must be under that policy alone. Two placements:
// the limiter wrapping each of the mux's handlers (the default pattern
// function), and wrapping the mux with ServeMuxPattern; in the first,
// each policy's own Applies agrees.
func TestServeMuxMountedInChi(t *testing.T) {
	routes := []string{"GET /x", "GET /x/", "/y", "/y/", "GET /h", "HEAD /h/", "GET /h/"}
	names := []string{"x", "x-tree", "y", "y-tree", "h", "h-tree-head", "h-tree"}
	var ps []*policy.Policy
	for i, rt := range routes {
		ps = append(ps, policy.Must(policy.PerMinute(names[i], 5, remoteKey, policy.WithRoutes(rt))))
	}
	for _, place := range []string{"each handler", "around the mux"} {
		mux := http.NewServeMux()
		var opts []policy.SetOption
		if place == "around the mux" {
			opts = append(opts, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
		}
		s, err := policy.NewSet(ps, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var mask, applies uint64
		ran := ""
		limit := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mask = s.Match(r)
				for i, p := range ps {
					if p.Applies(r, r.Pattern) {
						applies |= 1 << i
					}
				}
				next.ServeHTTP(w, r)
			})
		}
		for i, rt := range routes {
			var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = names[i] })
			if place == "each handler" {
				h = limit(h)
			}
			mux.Handle(rt, h)
		}
		var inner http.Handler = mux
		if place == "around the mux" {
			inner = limit(mux)
		}
		r := chi.NewRouter()
		r.Mount("/legacy", http.StripPrefix("/legacy", inner))
		for _, req := range []string{"GET /x", "GET /x/", "GET /x/a", "GET /y", "POST /y/", "GET /h", "HEAD /h", "GET /h/", "HEAD /h/a"} {
			method, path, _ := strings.Cut(req, " ")
			mask, applies, ran = 0, 0, ""
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest(method, "/legacy"+path, nil))
			if w.Code != http.StatusOK || ran == "" {
				t.Fatalf("%s: %s: status %d, no route ran", place, req, w.Code)
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
				t.Errorf("%s: %s, served by route %q: under %q, want %q", place, req, ran, got, want)
			}
			if place == "each handler" && strings.Join(alone, ",") != strings.Join(want, ",") {
				t.Errorf("%s: %s, served by route %q: Applies for %q, want %q", place, req, ran, alone, want)
			}
		}
	}
}
