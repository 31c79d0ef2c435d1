package ratekeeper_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReadmeRouteKeyOfUnroutedRequests holds the README's account of a
// key with a route part meeting a request no route matches (a scanner's
// /wp-admin), through chi and ServeMux, with the key behind a fallback
// (FirstOf(Join(ip, Route()), ip)) as the README names it. Installed
// before routing without a pattern function, the key cannot be extracted
// for any request: 400, the error handler told keyfunc.ErrNoRoute. With
// the router's pattern function, the route part of a request no route
// matches reads policy.NoRoute: all of a client's such requests share one
// limit (the second is a 429, not a 400), apart from every route, and
// nothing is reported. The README said only the former, after the
// sentence on pattern functions, so that it read as covering those 404s.
func TestReadmeRouteKeyOfUnroutedRequests(t *testing.T) {
	readme := strings.Join(strings.Fields(readmeText(t)), " ")
	for _, claim := range []string{
		"Installed before routing without a pattern function, a key with a route part (`keyfunc.Route`, the config's `route`) cannot be extracted for any request",
		"With a pattern function, the route part of a request no route matches is `policy.NoRoute`",
		"all of a client's unrouted requests share one limit, apart from every route (a scan is refused 429 once over it)",
	} {
		if !strings.Contains(readme, claim) {
			t.Errorf("README.md does not say %q", claim)
		}
	}

	ip := keyfunc.Must(keyfunc.IP())
	key := keyfunc.Must(keyfunc.FirstOf(keyfunc.Must(keyfunc.Join(ip, keyfunc.Route())), ip))
	paths := []string{"/wp-admin", "/favicon.ico", "/a", "/a"}
	for _, tc := range []struct {
		name    string
		pattern bool
		want    []int // the statuses of paths, in order
		told    error // what the error handler hears, nil: nothing
	}{
		{"no pattern function", false, []int{400, 400, 400, 400}, keyfunc.ErrNoRoute},
		{"pattern function", true, []int{404, 429, 200, 429}, nil},
	} {
		for _, router := range []string{"chi", "ServeMux"} {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				store, err := algorithms.NewMemoryStore()
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				var mu sync.Mutex
				var told []error
				opts := []middleware.Option{middleware.WithErrorHandler(func(_ *http.Request, err error) {
					mu.Lock()
					defer mu.Unlock()
					told = append(told, err)
				})}
				ps := []*policy.Policy{policy.Must(policy.PerMinute("per-ip-route", 1, key))}
				var h http.Handler
				if router == "chi" {
					r := chi.NewRouter()
					if tc.pattern {
						opts = append(opts, middleware.WithPatternFunc(policy.ChiPattern(r)))
					}
					r.Use(middleware.MustNew(store, ps, opts...).Handler)
					r.Get("/a", hello)
					h = r
				} else {
					mux := http.NewServeMux()
					mux.HandleFunc("GET /a", hello)
					if tc.pattern {
						opts = append(opts, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
					}
					h = middleware.MustNew(store, ps, opts...).Handler(mux)
				}
				var got []int
				for _, p := range paths {
					w := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodGet, p, nil)
					req.RemoteAddr = "192.0.2.1:1234"
					h.ServeHTTP(w, req)
					got = append(got, w.Code)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("GET %v: %v, want %v", paths, got, tc.want)
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case tc.told == nil && len(told) > 0:
					t.Errorf("error handler told %v, want nothing", told)
				case tc.told != nil && (len(told) != len(paths) || !errors.Is(told[0], tc.told)):
					t.Errorf("error handler told %v, want %v for each request", told, tc.told)
				}
			})
		}
	}
}
