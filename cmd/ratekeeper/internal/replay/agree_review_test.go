package replay

import (
	"context"
	"math/rand/v2"
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

// randomLog returns n random entries of a log, seeded by seed: times a
// quarter second to seconds apart, one in ten up to 20 s out of order;
// clients by address (IPv4, IPv6, mapped, with a zone), user, User-Agent
// and forwarding headers (X-Forwarded-For, Forwarded, X-Real-IP, some
// malformed); methods and paths among methods and paths; logged statuses
// among 200, 302, 400, 404 and 500 (the handler's, rewritten by
// agreeWithMiddleware as the application answers).
func randomLog(seed uint64, n int, methods, paths []string) []logparse.Entry {
	addrs := []string{"192.0.2.1", "192.0.2.2", "2001:db8::1", "2001:db8::2", "2001:db8:1::1", "10.0.0.1", "10.1.1.1", "2001:db8:ff::1", "::ffff:192.0.2.1", "fe80::1%eth0"}
	xffs := []string{"", "", "192.0.2.9", "192.0.2.9, 10.0.0.2", "198.51.100.1, 192.0.2.8, 10.0.0.3", "[2001:db8::5]:443, 10.0.0.2", "192.0.2.7:5555", "garbage, 10.0.0.2", " , 10.0.0.2", "unknown", "2001:db8:2::1,2001:db8:ff::2"}
	fwds := []string{"", "for=192.0.2.60;proto=http, for=10.0.0.2", "for=\"[2001:db8:cafe::17]:4711\"", "for=unknown", "For=192.0.2.43, for=198.51.100.17"}
	reals := []string{"", "192.0.2.77", "2001:db8::77", "bogus", "192.0.2.78:80"}
	users := []string{"", "", "alice", "bob"}
	uas := []string{"", "curl", "Mozilla"}
	statuses := []int{200, 200, 404, 500, 302, 400}
	pick := func(rng *rand.Rand, s []string) string { return s[rng.IntN(len(s))] }
	rng := rand.New(rand.NewPCG(seed, 7))
	var entries []logparse.Entry
	at := t0
	for range n {
		at = at.Add(time.Duration(rng.IntN(4)) * []time.Duration{time.Second, 250 * time.Millisecond}[rng.IntN(2)])
		en := logparse.Entry{Time: at, Addr: pick(rng, addrs), User: pick(rng, users), Method: pick(rng, methods), Path: pick(rng, paths), Status: statuses[rng.IntN(len(statuses))], UserAgent: pick(rng, uas)}
		if rng.IntN(10) == 0 {
			en.Time = at.Add(-time.Duration(rng.IntN(20)) * time.Second)
		}
		for _, h := range []struct{ name, value string }{{"X-Forwarded-For", pick(rng, xffs)}, {"Forwarded", pick(rng, fwds)}, {"X-Real-IP", pick(rng, reals)}} {
			if h.value != "" {
				en.Headers = append(en.Headers, logparse.Header{Name: h.name, Value: h.value})
			}
		}
		entries = append(entries, en)
	}
	return entries
}

// agreeWithMiddleware replays entries under the configuration doc and
// serves the same requests, in time order (log order among equal times),
// each at its instant, through the middleware built from doc around the
// whole router app (a ServeMux or chi router with the routes of doc's
// policies, resolved by pattern, policy.ServeMuxPattern or ChiPattern),
// whose handlers answer the logged status: first the statuses are
// rewritten as app answers them without the middleware (its redirects,
// 404s and 405s), as the application logs them. The replay must reject
// the requests the middleware answers 429, and refuse for want of a key
// those it answers with a problem 400 or 403.
func agreeWithMiddleware(t *testing.T, doc string, entries []logparse.Entry, app func(http.Handler, []string) http.Handler, pattern func(http.Handler) func(*http.Request) string) {
	t.Helper()
	agreeWithMiddlewareOpts(t, doc, Options{}, entries, app, pattern)
}

// agreeWithMiddlewareOpts is agreeWithMiddleware with the replay's
// Options opts.
func agreeWithMiddlewareOpts(t *testing.T, doc string, opts Options, entries []logparse.Entry, app func(http.Handler, []string) http.Handler, pattern func(http.Handler) func(*http.Request) string) {
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
	router := app(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }), routes)
	for i := range entries {
		status = entries[i].Status
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(entries[i].Method, "http://replay.invalid"+entries[i].Path, nil))
		entries[i].Status = w.Code
	}
	rep := replayEntries(t, doc, opts, entries)

	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b logparse.Entry) int { return a.Time.Compare(b.Time) })
	clock := algotest.NewClock(sorted[0].Time)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	noWait := middleware.WithWait(func(context.Context, time.Duration) error { return nil }) // leaky_queue: decided at arrival
	m, err := middleware.FromConfig(store, cfg, middleware.WithClock(clock), noWait, middleware.WithPatternFunc(pattern(router)))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(router)
	var rejected, noKey int64
	for _, en := range sorted {
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
		switch w.Code {
		case http.StatusTooManyRequests:
			rejected++
		case http.StatusBadRequest, http.StatusForbidden:
			if w.Header().Get("Content-Type") == "application/problem+json" {
				noKey++
			}
		}
	}
	if rejected == 0 {
		t.Fatalf("%s: the middleware rejected nothing: the test wants some rejections", doc)
	}
	if rep.Rejected != rejected || rep.NoKey != noKey {
		t.Errorf("replay: %d rejected, %d refused for want of a key; middleware: %d answered 429, %d 400 or 403", rep.Rejected, rep.NoKey, rejected, noKey)
	}
}

// TestReplayAgreesWithMiddleware replays random logs under configurations
// of every algorithm, key part, count, client-IP setting and route
// arrangement, and checks each against the middleware (see
// agreeWithMiddleware) through a real ServeMux: the replay's rejections
// and refusals for want of a key are the middleware's. It found route
// patterns shadowed by the paths of other methods' routes, redirects
// counted under routes, and route keys without their methods.
func TestReplayAgreesWithMiddleware(t *testing.T) {
	configs := []string{
		"policies:\n  - {name: g, limit: 2, window: 10s, methods: [GET]}\n  - {name: h, limit: 1, window: 10s, methods: [HEAD], routes: [\"GET /items/{id}\", \"/login\"]}\n",
		"policies:\n  - {name: g, limit: 2, window: 10s, key: [ip, method], routes: [\"GET /items/{id}\", \"HEAD /items/{id}\", \"/\"]}\n  - {name: h, limit: 1, window: 10s, routes: [\"GET /items/{id}\"], count: failed}\n",
		"policies:\n  - {name: g, limit: 2, window: 10s, key: user, on_missing_key: reject_403, routes: [\"POST /login\"]}\n  - {name: h, limit: 3, window: 10s, key: [ip, \"header:User-Agent\"], fallback: [ip]}\n",
		"trusted_proxies: [10.0.0.0/8, \"2001:db8:ff::/48\"]\nip_source: x-forwarded-for\npolicies:\n  - {name: a, limit: 3, window: 10s}\n",
		"trusted_hops: 2\npolicies:\n  - {name: a, limit: 3, window: 10s}\n",
		"trusted_proxies: [10.0.0.0/8]\nip_source: forwarded\npolicies:\n  - {name: a, limit: 3, window: 10s}\n",
		"trusted_proxies: [10.0.0.0/8]\nip_source: header:X-Real-IP\npolicies:\n  - {name: a, limit: 3, window: 10s}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: route, routes: [\"GET /items/{id}\", \"DELETE /items/{id}\", \"HEAD /login\", \"/login\"]}\n  - {name: b, limit: 3, window: 10s, routes: [\"GET /login\"]}\n",
		"policies:\n  - {name: q, limit: 2, window: 10s, algorithm: leaky_queue, max_delay: 5s}\n  - {name: b, limit: 3, window: 10s, algorithm: fixed_window, methods: [GET, HEAD]}\n",
		"policies:\n  - {name: q, limit: 2, window: 10s, key: [ip, route], routes: [\"/items/\", \"GET /items/{id}\"]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, routes: [\"GET /items/{id}\", \"POST /login\", \"/\"]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: route, routes: [\"GET /items/{id}\", \"/login\", \"/items/\"]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: [\"header:User-Agent\"], fallback: [user], on_missing_key: reject_403}\n",
		"ipv6_prefix: 48\nipv4_prefix: 24\npolicies:\n  - {name: a, limit: 3, window: 10s, count: failed, algorithm: leaky_bucket}\n",
		"policies:\n  - {name: ip, limit: 3, window: 10s}\n  - {name: login, limit: 2, window: 1m, algorithm: fixed_window, key: user, fallback: [ip], routes: [\"POST /login\"]}\n  - {name: fail, limit: 2, window: 30s, count: failed, algorithm: token_bucket}\n",
		"policies:\n  - {name: a, limit: 4, window: 20s, algorithm: sliding_log}\n  - {name: b, limit: 5, window: 30s, algorithm: leaky_bucket, burst: 3, key: [ip, \"header:User-Agent\"]}\n",
		"policies:\n  - {name: a, limit: 4, window: 20s, algorithm: sliding_buckets, buckets: 4, key: route, routes: [\"/items/{id}\", \"POST /login\", \"/\"]}\n  - {name: s, limit: 2, window: 10s, count: succeeded, methods: [POST]}\n",
		"policies:\n  - {name: a, limit: 4, window: 20s, algorithm: sliding_buckets, buckets: 4, key: route, routes: [\"/items/{id}\", \"POST /login\", \"/\"]}\n",
		"policies:\n  - {name: s, limit: 1, window: 1m, count: succeeded, methods: [POST], routes: [\"/\"]}\n",
		"policies:\n  - {name: a, limit: 4, window: 20s, algorithm: sliding_buckets, buckets: 4, key: route, routes: [\"/items/{id}\", \"/\"]}\n",
		"policies:\n  - {name: a, limit: 3, window: 7s, algorithm: token_bucket, burst: 5, key: user, on_missing_key: skip}\n  - {name: b, limit: 6, window: 1m, algorithm: sliding_window, key: [ip, method]}\n",
	}
	paths := []string{"/", "/login", "/items/1", "/items/2", "/other", "/items/", "/items", "/a/../login", "//login", "/items/a%2Fb", "/items/%C3%A9", "/login/"}
	mux := func(h http.Handler, routes []string) http.Handler {
		m := http.NewServeMux()
		for _, r := range routes {
			m.Handle(r, h)
		}
		return m
	}
	muxPattern := func(h http.Handler) func(*http.Request) string { return policy.ServeMuxPattern(h.(*http.ServeMux)) }
	for i, doc := range configs {
		for seed := range 4 {
			entries := randomLog(uint64(100*i+seed), 300, []string{"GET", "POST", "HEAD", "DELETE"}, paths)
			agreeWithMiddleware(t, doc, entries, mux, muxPattern)
		}
	}
}

// TestReplayAgreesWithChiMiddleware is TestReplayAgreesWithMiddleware
// through chi, with routes only chi registers, for methods other than
// HEAD (chi has no HEAD for a GET route; the replay, not knowing whether
// the application installs chi's GetHead, puts a HEAD under its GET
// route's policies, as policy.Set.Match does).
func TestReplayAgreesWithChiMiddleware(t *testing.T) {
	configs := []string{
		"policies:\n  - {name: a, limit: 2, window: 10s, routes: [\"/items/{id:[0-9]+}\", \"POST /login\", \"/*\"]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: route, routes: [\"/items/{id:[0-9]+}\", \"GET /items/{slug}\", \"POST /login\"]}\n  - {name: b, limit: 3, window: 10s, key: [ip, route], routes: [\"/files/{name}.{ext}\"]}\n",
	}
	paths := []string{"/", "/login", "/items/1", "/items/ab", "/files/a.txt", "/files/b", "/other", "//login", "/items/1/"}
	router := func(h http.Handler, routes []string) http.Handler {
		r := chi.NewRouter()
		for _, p := range routes {
			r.Handle(p, h)
		}
		return r
	}
	chiPattern := func(h http.Handler) func(*http.Request) string { return policy.ChiPattern(h.(chi.Router)) }
	for i, doc := range configs {
		for seed := range 4 {
			entries := randomLog(uint64(100*i+seed), 300, []string{"GET", "POST", "DELETE"}, paths)
			agreeWithMiddleware(t, doc, entries, router, chiPattern)
		}
	}
}
