package replay

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedRequestRouteKey: a request to a path no route of the
// application matches (a 404: a scanner's /wp-login.php, a stale link)
// under a policy keyed by its route on every request. The middleware
// around the whole router, with the pattern function README's setup
// gives it (policy.ServeMuxPattern, policy.ChiPattern), keys it by
// policy.NoRoute, "(none)": counted, all of a client's unrouted requests
// under one key, the router left to answer 404. (A middleware installed
// on the routes never sees it.) The replay, which knows the routes (the
// configuration's and --route), refused it "for want of a key (400/403)",
// as a middleware placed before routing without a pattern function
// does: it reported 400s no correct setup answers, rejections it would
// not make, and exit status 1 on a log that has none.
func TestUnroutedRequestRouteKey(t *testing.T) {
	const doc = "policies:\n  - {name: a, limit: 1, window: 1m, key: [ip, route]}\n  - {name: login, limit: 5, window: 1m, routes: [\"POST /login\"]}\n"
	app := []string{"GET /items/{id}"}
	reqs := [][2]string{{"GET", "/items/1"}, {"GET", "/wp-login.php"}, {"GET", "/wp-login.php"}, {"POST", "/login"}, {"GET", "/nope/"}, {"GET", "/items/2"}}
	for _, tc := range []struct {
		name   string
		around func(patterns []string, m func(...middleware.Option) *middleware.Middleware) http.Handler
	}{
		{"ServeMux", func(patterns []string, m func(...middleware.Option) *middleware.Middleware) http.Handler {
			mux := http.NewServeMux()
			for _, p := range patterns {
				mux.Handle(p, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			}
			return m(middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux)
		}},
		{"chi", func(patterns []string, m func(...middleware.Option) *middleware.Middleware) http.Handler {
			r := chi.NewRouter()
			r.Use(m(middleware.WithPatternFunc(policy.ChiPattern(r))).Handler)
			for _, p := range patterns {
				r.Handle(p, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parse(t, doc)
			var entries []logparse.Entry
			for i, mp := range reqs {
				entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", Method: mp[0], Path: mp[1], Status: 200})
			}
			opts := Options{Routes: app}
			if tc.name == "chi" {
				opts.Routes = append(opts.Routes, "/items/{id:[0-9]+}") // a chi-only pattern: the replay routes as chi does
			}
			rep := replayEntries(t, doc, opts, entries)

			clock := algotest.NewClock(t0)
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			build := func(o ...middleware.Option) *middleware.Middleware {
				// Its error handler takes the notice of the login policy's
				// unrouted requests, which is expected here.
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				m, err := middleware.FromConfig(store, cfg, append(o, middleware.WithClock(clock), quiet)...)
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			h := tc.around(append([]string{"POST /login"}, opts.Routes...), build)
			var rejected, noKey int64
			for _, en := range entries {
				clock.Set(en.Time)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(en.Method, en.Path, nil))
				switch w.Code {
				case http.StatusTooManyRequests:
					rejected++
				case http.StatusBadRequest, http.StatusForbidden:
					noKey++
				}
			}
			if rejected == 0 || noKey != 0 {
				t.Fatalf("middleware: %d answered 429, %d 400 or 403; the test wants some 429s and no 400", rejected, noKey)
			}
			if rep.Rejected != rejected || rep.NoKey != noKey {
				t.Errorf("replay: %d rejected by a limit, %d refused for want of a key; middleware: %d answered 429, %d 400 or 403", rep.Rejected, rep.NoKey, rejected, noKey)
			}
		})
	}
}

// TestRouteHintOnlyWithoutRoutes: the report's hint to give the
// application's routes with --route is for a replay that knows none, where
// no request has a route key; with routes known, a route key part always
// finds one (policy.NoRoute at worst), and a request refused for want of
// its user under key [user, route] drew the hint all the same.
func TestRouteHintOnlyWithoutRoutes(t *testing.T) {
	const doc = "policies:\n  - {name: r, limit: 5, window: 1s, key: [user, route]}\n"
	en := []logparse.Entry{
		{Time: t0, Addr: "192.0.2.1", Method: "GET", Path: "/items/7", User: "ann"},
		{Time: t0, Addr: "192.0.2.1", Method: "GET", Path: "/items/7"}, // no user
	}
	for _, tc := range []struct {
		routes []string
		noKey  int64
		hint   bool
	}{{nil, 2, true}, {[]string{"/items/{id}"}, 1, false}} {
		rep := replayEntries(t, doc, Options{Routes: tc.routes}, en)
		var b strings.Builder
		if err := rep.WriteText(&b, Input{Files: []string{"a"}, Lines: 2, Entries: 2}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "--route"); rep.NoKey != tc.noKey || got != tc.hint {
			t.Errorf("routes %q: %d without a key, --route hint %v; want %d, %v:\n%s", tc.routes, rep.NoKey, got, tc.noKey, tc.hint, b.String())
		}
	}
}
