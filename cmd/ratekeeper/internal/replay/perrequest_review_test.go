package replay

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// agreePerRequest replays entries under the configuration doc one at a
// time, in time order (Options.Reorder -1: each decided as it is added),
// and serves each, at its instant, through the middleware built from doc
// around a ServeMux or, with useChi, a chi router holding the policies'
// routes (the replay told so by Options.Router), whose handlers answer the
// logged status as the application would (see agreeWithMiddleware). Each
// request the replay rejects must be one the middleware answers 429, and
// each it refuses for want of a key one answered with a problem 400 or
// 403: request by request, not only in total. It returns the requests the
// middleware answered 429.
func agreePerRequest(t *testing.T, doc string, entries []logparse.Entry, useChi bool) int {
	t.Helper()
	cfg := parse(t, doc)
	var routes []string
	for _, d := range cfg.Definitions {
		for _, r := range d.Routes {
			if !slices.Contains(routes, r) {
				routes = append(routes, r)
			}
		}
	}
	var status int
	m0 := http.NewServeMux()
	app := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
	c0 := chi.NewRouter()
	for _, r := range routes {
		if useChi {
			c0.Handle(r, app)
		} else {
			m0.Handle(r, app)
		}
	}
	var router http.Handler = m0
	var pf func(*http.Request) string = policy.ServeMuxPattern(m0)
	if useChi {
		router = c0
		pf = policy.ChiPattern(c0)
	}
	if len(routes) == 0 {
		router = app
	}
	for i := range entries {
		status = entries[i].Status
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(entries[i].Method, "http://replay.invalid"+entries[i].Path, nil))
		entries[i].Status = w.Code
	}
	slices.SortStableFunc(entries, func(a, b logparse.Entry) int { return a.Time.Compare(b.Time) })
	ro := RouterServeMux
	if useChi {
		ro = RouterChi
	}
	e, err := New(cfg, Options{Reorder: -1, Router: ro})
	if err != nil {
		t.Fatal(err)
	}
	clock := algotest.NewClock(entries[0].Time)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	noWait := middleware.WithWait(func(context.Context, time.Duration) error { return nil })
	opts := []middleware.Option{middleware.WithClock(clock), noWait}
	if len(routes) > 0 {
		opts = append(opts, middleware.WithPatternFunc(pf))
	}
	m, err := middleware.FromConfig(store, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(router)
	bad, rejected := 0, 0
	for i, en := range entries {
		r0, k0 := e.rejected, e.noKey
		cp := en
		if err := e.Add(&cp); err != nil {
			t.Fatal(err)
		}
		rr, rk := e.rejected > r0, e.noKey > k0
		clock.Set(en.Time)
		status = en.Status
		req := httptest.NewRequest(en.Method, "http://replay.invalid"+en.Path, nil)
		req.RemoteAddr = net.JoinHostPort(en.Addr, "40000")
		for _, hd := range en.Headers {
			req.Header.Add(hd.Name, hd.Value)
		}
		if en.UserAgent != "" {
			req.Header.Set("User-Agent", en.UserAgent)
		}
		if en.User != "" {
			req = req.WithContext(keyfunc.WithUser(req.Context(), en.User))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		mr := w.Code == http.StatusTooManyRequests
		if mr {
			rejected++
		}
		mk := (w.Code == http.StatusBadRequest || w.Code == http.StatusForbidden) && w.Header().Get("Content-Type") == "application/problem+json"
		if mr != rr || mk != rk {
			if bad++; bad <= 3 {
				t.Errorf("chi %v, %q: request %d (%s %s from %s at %v): replay rejected %v, refused for want of a key %v; middleware answered %d",
					useChi, doc, i, en.Method, en.Path, en.Addr, en.Time.Format(time.TimeOnly), rr, rk, w.Code)
			}
		}
	}
	return rejected
}

// TestReplayAgreesPerRequest checks the replay against the middleware
// request by request (see agreePerRequest) through a real ServeMux and a
// real chi router, under stacked policies of route, user, header and
// method keys, on random logs whose paths need cleaning, redirecting or
// unescaping; TestReplayAgreesWithMiddleware compares totals, where a
// request wrongly rejected and another wrongly admitted cancel out.
func TestReplayAgreesPerRequest(t *testing.T) {
	configs := []string{
		"policies:\n  - {name: ip, limit: 3, window: 10s, key: [ip, route], routes: [\"/items/{id}\", \"POST /login\", \"/\"]}\n  - {name: login, limit: 2, window: 1m, algorithm: fixed_window, key: user, fallback: [ip], routes: [\"POST /login\"]}\n",
		"policies:\n  - {name: a, limit: 4, window: 20s, algorithm: sliding_log, key: route, routes: [\"/items/{id}\", \"/login\"]}\n  - {name: b, limit: 5, window: 30s, algorithm: leaky_bucket, burst: 3, key: [ip, \"header:User-Agent\"], methods: [GET, HEAD]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: [ip, route], routes: [\"/items/{id}\", \"/login/\", \"GET /other\"]}\n",
		"policies:\n  - {name: q, limit: 2, window: 10s, algorithm: leaky_queue, max_delay: 5s, count: succeeded}\n  - {name: f, limit: 3, window: 7s, algorithm: token_bucket, burst: 5, key: user, on_missing_key: skip, count: failed}\n  - {name: s, limit: 6, window: 1m, algorithm: sliding_window, key: [ip, method]}\n",
	}
	paths := []string{"/", "/login", "/login/", "/items/1", "/items/%41", "/items/a%2Fb", "/items/caf%C3%A9", "/items/x%20y", "/other", "//login", "/items/./1", "/items/../login", "/items/1/", "/ITEMS/1", "/items/%2e%2e", "/login%2F"}
	for i, doc := range configs {
		for _, useChi := range []bool{false, true} {
			rejected := 0
			for seed := range 4 {
				rejected += agreePerRequest(t, doc, randomLog(uint64(1000*i+seed), 400, []string{"GET", "POST", "HEAD", "OPTIONS"}, paths), useChi)
			}
			if rejected == 0 {
				t.Errorf("chi %v, %q: the middleware rejected nothing: the test wants some rejections", useChi, doc)
			}
		}
	}
}
