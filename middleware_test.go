package ratekeeper_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// End-to-end tests: real HTTP through httptest.NewServer, a chi router and a
// stdlib ServeMux, the in-memory store on a manual clock. Clients are told
// apart by X-Forwarded-For, which the IP key trusts from the loopback peer
// (the test client), as it would from a reverse proxy.

// t0 is a minute boundary, so fixed windows start with the test.
var t0 = time.Unix(1_700_000_040, 0)

// keys returns the IP key (trusting loopback proxies) and IP+user.
// clockedStore returns a clock at t0 and a memory store reading it, closed
// when the test ends.
func clockedStore(t testing.TB) (*algotest.Clock, *algorithms.MemoryStore) {
	t.Helper()
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return clock, store
}

func keys(t testing.TB) (ip, ipUser keyfunc.Func) {
	t.Helper()
	ip, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")))
	if err != nil {
		t.Fatal(err)
	}
	ipUser, err = keyfunc.Join(ip, keyfunc.User())
	if err != nil {
		t.Fatal(err)
	}
	return ip, ipUser
}

// auth stands for the application's authentication: it puts the X-User
// header's user into the context, where keyfunc.User finds it.
func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-User"); u != "" {
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })

// app is the application under test, built on a store.
type app struct {
	global *middleware.Middleware // 10/s + 100/min per IP (fixed windows)
	writes *middleware.Middleware // register and comments presets, as a rule table
	login  *middleware.Middleware // the login preset, for wrapping one route
}

func newApp(t testing.TB, store algorithms.Store, opts ...middleware.Option) *app {
	t.Helper()
	ip, ipUser := keys(t)
	global, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rules := []*policy.Policy{
		policy.Must(policy.Register(ipUser, policy.WithRoutes("POST /register"))),
		policy.Must(policy.Comments(ipUser, policy.WithRoutes("POST /comments"))),
	}
	writes, err := middleware.New(store, rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	login, err := middleware.New(store, []*policy.Policy{policy.Must(policy.Login(ipUser))}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &app{global: global, writes: writes, login: login}
}

// chiRouter wires the app into chi: the global limits with r.Use, the write
// rules with r.Use inside a Group (so they run after routing, where chi
// knows the pattern), and the login preset by wrapping one route with r.With.
func (a *app) chiRouter() http.Handler {
	r := chi.NewRouter()
	r.Use(auth)
	r.Use(a.global.Handler)
	r.Get("/", hello)
	r.Group(func(r chi.Router) {
		r.Use(a.writes.Handler)
		r.Post("/register", hello)
		r.Post("/comments", hello)
	})
	r.With(a.login.Handler).Post("/login", hello)
	return r
}

// stdlibApp wires the same app into a ServeMux: the global limits and the
// write rules wrap the whole mux (the rules resolve the route by asking the
// mux, policy.ServeMuxPattern), and the login preset wraps its handler.
func stdlibApp(t testing.TB, store algorithms.Store, opts ...middleware.Option) http.Handler {
	t.Helper()
	a := newApp(t, store, opts...)
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", hello)
	mux.Handle("POST /register", hello)
	mux.Handle("POST /comments", hello)
	mux.Handle("POST /login", a.login.Handler(hello))
	writes, err := middleware.New(store, a.writes.Set().Policies(), append(opts, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))...)
	if err != nil {
		t.Fatal(err)
	}
	return auth(a.global.Handler(writes.Handler(mux)))
}

// routers returns one server per router, each with a fresh store on its own
// clock.
func routers(t *testing.T, opts ...middleware.Option) map[string]struct {
	srv   *httptest.Server
	clock *algotest.Clock
} {
	out := map[string]struct {
		srv   *httptest.Server
		clock *algotest.Clock
	}{}
	for _, name := range []string{"chi", "stdlib"} {
		clock, store := clockedStore(t)
		var h http.Handler
		if name == "chi" {
			h = newApp(t, store, opts...).chiRouter()
		} else {
			h = stdlibApp(t, store, opts...)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		out[name] = struct {
			srv   *httptest.Server
			clock *algotest.Clock
		}{srv, clock}
	}
	return out
}

// req is one scripted request and the response it must get.
type req struct {
	advance    time.Duration // move the clock first
	method     string
	path       string
	client     string // X-Forwarded-For
	user       string // X-User
	status     int
	rateLimit  string // all RateLimit field lines, joined by ", "; "-" for none
	retryAfter string
}

func do(t *testing.T, srv *httptest.Server, method, path, client, user string) *http.Response {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if client != "" {
		r.Header.Set("X-Forwarded-For", client)
	}
	if user != "" {
		r.Header.Set("X-User", user)
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func script(t *testing.T, srv *httptest.Server, clock *algotest.Clock, steps []req) {
	t.Helper()
	for i, s := range steps {
		clock.Advance(s.advance)
		resp := do(t, srv, s.method, s.path, s.client, s.user)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rl := strings.Join(resp.Header.Values("RateLimit"), ", ")
		if rl == "" {
			rl = "-"
		}
		if resp.StatusCode != s.status || rl != s.rateLimit || resp.Header.Get("Retry-After") != s.retryAfter {
			t.Errorf("step %d %s %s (client %s user %q): %d RateLimit %q Retry-After %q\n\twant %d %q %q",
				i, s.method, s.path, s.client, s.user, resp.StatusCode, rl, resp.Header.Get("Retry-After"),
				s.status, s.rateLimit, s.retryAfter)
		}
		if got, want := strings.Join(resp.Header.Values("RateLimit-Policy"), ", "), policiesOf(t, s.rateLimit); got != want {
			t.Errorf("step %d %s %s: RateLimit-Policy %q, want %q", i, s.method, s.path, got, want)
		}
	}
}

// quota is the RateLimit-Policy member of each policy these tests use.
var quota = map[string]string{
	"per-second": `"per-second";q=10;w=1`, "per-minute": `"per-minute";q=100;w=60`,
	"login": `"login";q=5;w=60`, "register": `"register";q=10;w=3600`, "comments": `"comments";q=3;w=60`,
	"item-writes": `"item-writes";q=2;w=60`, "item-reads": `"item-reads";q=2;w=60`, "once": `"once";q=1;w=60`,
}

// policiesOf returns the RateLimit-Policy value that goes with a RateLimit
// value ("-" for none): the same policies, in the same order.
func policiesOf(t *testing.T, rateLimit string) string {
	t.Helper()
	if rateLimit == "-" {
		return ""
	}
	var out []string
	for _, m := range strings.Split(rateLimit, ", ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(m, `"`), `"`)
		q, ok := quota[name]
		if !ok {
			t.Fatalf("no quota for policy %q", name)
		}
		out = append(out, q)
	}
	return strings.Join(out, ", ")
}

// repeat returns n copies of r, the last of them with last's expectations.
func repeat(n int, r req, last req) []req {
	out := make([]req, 0, n)
	for i := 0; i < n-1; i++ {
		out = append(out, r)
	}
	return append(out, last)
}

func TestEndToEndGlobalLimits(t *testing.T) {
	for name, rt := range routers(t) {
		t.Run(name, func(t *testing.T) {
			a := "198.51.100.1"
			steps := []req{
				{0, "GET", "/", a, "", 200, `"per-second";r=9;t=1, "per-minute";r=99;t=60`, ""},
			}
			steps = append(steps, repeat(9, req{0, "GET", "/", a, "", 200, "", ""}, // not checked below
				req{0, "GET", "/", a, "", 200, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, ""})...)
			steps = append(steps,
				// The per-second policy trips: Retry-After is its t.
				req{0, "GET", "/", a, "", 429, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, "1"},
				req{500 * time.Millisecond, "GET", "/", a, "", 429, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, "1"},
				// A new second; the denied requests consumed nothing.
				req{500 * time.Millisecond, "GET", "/", a, "", 200, `"per-second";r=9;t=1, "per-minute";r=89;t=59`, ""},
				// Another client is not affected.
				req{0, "GET", "/", "198.51.100.2", "", 200, `"per-second";r=9;t=1, "per-minute";r=99;t=59`, ""},
			)
			// Unchecked steps: run them, checking status only.
			for i := range steps {
				if steps[i].rateLimit == "" {
					resp := do(t, rt.srv, steps[i].method, steps[i].path, steps[i].client, "")
					resp.Body.Close()
					if resp.StatusCode != steps[i].status {
						t.Fatalf("step %d: %d", i, resp.StatusCode)
					}
					continue
				}
				script(t, rt.srv, rt.clock, steps[i:i+1])
			}

			// The per-minute policy trips for client C after 10 full seconds.
			c := "203.0.113.50"
			for s := range 10 {
				for range 10 {
					resp := do(t, rt.srv, "GET", "/", c, "")
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Fatalf("second %d: %d", s, resp.StatusCode)
					}
				}
				rt.clock.Advance(time.Second)
			}
			// Now 11 s into the minute (1 s of it spent above): the second
			// is fresh, the minute is spent until its end, 49 s away.
			script(t, rt.srv, rt.clock, []req{
				{0, "GET", "/", c, "", 429, `"per-second";r=10;t=0, "per-minute";r=0;t=49`, "49"},
				{48 * time.Second, "GET", "/", c, "", 429, `"per-second";r=10;t=0, "per-minute";r=0;t=1`, "1"},
				{time.Second, "GET", "/", c, "", 200, `"per-second";r=9;t=1, "per-minute";r=99;t=60`, ""},
			})
		})
	}
}

func TestEndToEndWriteEndpoints(t *testing.T) {
	for name, rt := range routers(t) {
		t.Run(name, func(t *testing.T) {
			ip := "192.0.2.10"
			g := func(sec, min int) string {
				return `"per-second";r=` + strconv.Itoa(sec) + `;t=1, "per-minute";r=` + strconv.Itoa(min) + ";t=60"
			}
			login := func(r int, t string) string { return `"login";r=` + strconv.Itoa(r) + ";t=" + t }
			steps := []req{
				// Login: 5 per minute per IP and user, sliding log. Each
				// accepted attempt frees its unit exactly 60 s later, and an
				// event exactly 60 s old still counts: t = 60 s + 1 ns, so 61.
				{0, "POST", "/login", ip, "ann", 200, g(9, 99) + ", " + login(4, "61"), ""},
				{0, "POST", "/login", ip, "ann", 200, g(8, 98) + ", " + login(3, "61"), ""},
				{0, "POST", "/login", ip, "ann", 200, g(7, 97) + ", " + login(2, "61"), ""},
				{0, "POST", "/login", ip, "ann", 200, g(6, 96) + ", " + login(1, "61"), ""},
				{0, "POST", "/login", ip, "ann", 200, g(5, 95) + ", " + login(0, "61"), ""},
				// The sixth is denied by login; the global limits (an outer
				// middleware) have counted it.
				{0, "POST", "/login", ip, "ann", 429, g(4, 94) + ", " + login(0, "61"), "61"},
				// Another user from the same IP has a fresh login quota.
				{0, "POST", "/login", ip, "bob", 200, g(3, 93) + ", " + login(4, "61"), ""},
				// Nor is ann locked out by the attempts from ip: from her
				// own address her quota is whole.
				{0, "POST", "/login", "192.0.2.11", "ann", 200, g(9, 99) + ", " + login(4, "61"), ""},
				// No user: the login key cannot be built, 400.
				{0, "POST", "/login", ip, "", 400, g(2, 92), ""},
				// 61 s later ann may try again.
				{61 * time.Second, "POST", "/login", ip, "ann", 200, `"per-second";r=9;t=1, "per-minute";r=99;t=59, ` + login(4, "61"), ""},

				// Register: 10 per hour (sliding window counter, hours
				// aligned to the epoch). This request, at Unix time
				// 1,700,000,102, is 902 s into its hour: it moves to the
				// previous window 2,698 s later and its weight there falls
				// below one unit only as that window ends, 3,600 s after:
				// r grows again in 6,298 s.
				{time.Second, "POST", "/register", ip, "new", 200, `"per-second";r=9;t=1, "per-minute";r=98;t=58, "register";r=9;t=6298`, ""},
				// Comments: a token bucket of 3, one more every 10 s.
				{0, "POST", "/comments", ip, "ann", 200, `"per-second";r=8;t=1, "per-minute";r=97;t=58, "comments";r=2;t=10`, ""},
				{0, "POST", "/comments", ip, "ann", 200, `"per-second";r=7;t=1, "per-minute";r=96;t=58, "comments";r=1;t=10`, ""},
				{0, "POST", "/comments", ip, "ann", 200, `"per-second";r=6;t=1, "per-minute";r=95;t=58, "comments";r=0;t=10`, ""},
				{0, "POST", "/comments", ip, "ann", 429, `"per-second";r=5;t=1, "per-minute";r=94;t=58, "comments";r=0;t=10`, "10"},
				{10 * time.Second, "POST", "/comments", ip, "ann", 200, `"per-second";r=9;t=1, "per-minute";r=93;t=48, "comments";r=0;t=10`, ""},
				// GET / has no write rule.
				{0, "GET", "/", ip, "ann", 200, `"per-second";r=8;t=1, "per-minute";r=92;t=48`, ""},
			}
			script(t, rt.srv, rt.clock, steps)
		})
	}
}

func TestEndToEndProblemJSON(t *testing.T) {
	for name, rt := range routers(t) {
		t.Run(name, func(t *testing.T) {
			var resp *http.Response
			for range 11 {
				resp = do(t, rt.srv, "GET", "/", "198.51.100.77", "")
				if resp.StatusCode != 429 {
					resp.Body.Close()
				}
			}
			defer resp.Body.Close()
			if resp.StatusCode != 429 {
				t.Fatalf("status %d, want 429", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			var p map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"type":              "https://iana.org/assignments/http-problem-types#quota-exceeded",
				"title":             "Too Many Requests",
				"status":            float64(429),
				"detail":            "Quota exceeded for per-second; retry in 1 second.",
				"violated-policies": []any{"per-second"},
			}
			if len(p) != len(want) {
				t.Errorf("problem has members %v, want %v", p, want)
			}
			for k, v := range want {
				if got, _ := json.Marshal(p[k]); string(got) != string(must(json.Marshal(v))) {
					t.Errorf("problem %s = %s, want %v", k, got, v)
				}
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestEndToEndBoundaryBurst replays the seed's boundary burst over HTTP:
// 100 per minute, 100 requests at 59 s and 100 at 61 s.
func TestEndToEndBoundaryBurst(t *testing.T) {
	for _, tt := range []struct {
		kind algorithms.Kind
		want int
	}{
		{algorithms.FixedWindow, 200},
		{algorithms.SlidingLog, 100},
		{algorithms.SlidingWindow, 101},
	} {
		for _, router := range []string{"chi", "stdlib"} {
			t.Run(string(tt.kind)+"/"+router, func(t *testing.T) {
				clock, store := clockedStore(t)
				ip, _ := keys(t)
				m := middleware.MustNew(store, []*policy.Policy{
					policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(tt.kind))),
				})
				srv := oneRoute(t, router, "/", m, hello)
				admitted := 0
				for _, at := range []time.Duration{59 * time.Second, 61 * time.Second} {
					clock.Set(t0.Add(at))
					for range 100 {
						resp := do(t, srv, "GET", "/", "198.51.100.9", "")
						resp.Body.Close()
						if resp.StatusCode == 200 {
							admitted++
						}
					}
				}
				if admitted != tt.want {
					t.Errorf("%s admitted %d of 200, want %d", tt.kind, admitted, tt.want)
				}
			})
		}
	}
}

func TestEndToEndShadow(t *testing.T) {
	var mu sync.Mutex
	var shadowed []string
	report := middleware.WithShadow(func(r *http.Request, res *middleware.Result) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < res.Len(); i++ {
			if !res.Decision(i).Allowed {
				shadowed = append(shadowed, res.Policy(i).Name())
			}
		}
	})
	for name, rt := range routers(t, report) {
		t.Run(name, func(t *testing.T) {
			shadowed = nil
			for range 9 {
				resp := do(t, rt.srv, "GET", "/", "198.51.100.3", "")
				resp.Body.Close()
			}
			steps := []req{
				{0, "GET", "/", "198.51.100.3", "", 200, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, ""},
				// Shadow mode lets the 11th and 12th through, with the
				// headers a client would have seen; denied, they consume
				// nothing.
				{0, "GET", "/", "198.51.100.3", "", 200, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, ""},
				{0, "GET", "/", "198.51.100.3", "", 200, `"per-second";r=0;t=1, "per-minute";r=90;t=60`, ""},
			}
			script(t, rt.srv, rt.clock, steps)
			if strings.Join(shadowed, ",") != "per-second,per-second" {
				t.Errorf("shadow reports %v, want two per-second denials", shadowed)
			}
		})
	}
}

// failingStore is a store whose backend is down.
type failingStore struct{}

var errBackend = errors.New("dial tcp 10.1.2.3:6379: connection refused")

func (failingStore) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, errBackend
}

func TestEndToEndStoreFailure(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	onError := middleware.WithErrorHandler(func(_ *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	})
	for _, tt := range []struct {
		name       string
		failure    middleware.Failure
		status     int
		retryAfter string
	}{
		{"open", middleware.FailOpen(), 200, ""},
		{"closed", middleware.FailClosed(30 * time.Second), 503, "30"},
	} {
		for _, router := range []string{"chi", "stdlib"} {
			t.Run(tt.name+"/"+router, func(t *testing.T) {
				errs = nil
				// The forwarding check is told of the proxies the keys
				// trust (see keys), and so leaves their requests alone
				// without asking the keys. Untold, it would ask them, see
				// them read the proxies' header and report nothing either:
				// errs holds the store's failures alone in both cases.
				opts := []middleware.Option{onError, middleware.OnStoreError(tt.failure), middleware.WithBreaker(0, 0),
					middleware.CheckForwardingFrom("X-Forwarded-For", netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))}
				var h http.Handler
				if router == "chi" {
					h = newApp(t, failingStore{}, opts...).chiRouter()
				} else {
					h = stdlibApp(t, failingStore{}, opts...)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				for _, path := range []string{"/", "/", "/login"} {
					method := map[string]string{"/": "GET", "/login": "POST"}[path]
					resp := do(t, srv, method, path, "198.51.100.4", "ann")
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != tt.status || resp.Header.Get("Retry-After") != tt.retryAfter {
						t.Errorf("%s %s: %d Retry-After %q, want %d %q", method, path, resp.StatusCode, resp.Header.Get("Retry-After"), tt.status, tt.retryAfter)
					}
					if resp.Header.Get("RateLimit") != "" {
						t.Errorf("%s: RateLimit %q sent without a decision", path, resp.Header.Get("RateLimit"))
					}
					if strings.Contains(string(body), "10.1.2.3") || strings.Contains(string(body), "refused") {
						t.Errorf("error text reached the client: %s", body)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				// Fail open: GET, GET, POST /login through the global and the
				// login middleware = 4 failures. Fail closed stops at the
				// global middleware: 3.
				want := map[string]int{"open": 4, "closed": 3}[tt.name]
				if len(errs) != want {
					t.Errorf("%d errors reported, want %d", len(errs), want)
				}
				for _, err := range errs {
					if !errors.Is(err, errBackend) {
						t.Errorf("reported error %v does not wrap the backend's", err)
					}
				}
			})
		}
	}
}

// chiFind is the option the middleware.WithPatternFunc doc gives for a
// rule table installed with r.Use on chi's top-level router r: it asks r
// which route chi will take (policy.ChiPattern).
func chiFind(r *chi.Mux) middleware.Option {
	return middleware.WithPatternFunc(policy.ChiPattern(r))
}

// TestEndToEndChiTopLevelRewrittenPath: a top-level rule table with the
// documented pattern function (chiFind) limits the requests chi serves
// from "/login" and "/users/{id}" whatever path they were sent with: chi's
// StripSlashes and CleanPath (installed before the limiter) rewrite the
// route context's RoutePath, and chi routes an escaped path by its
// RawPath. Asked for req.URL.Path, Find found no route for them, and they
// escaped the policies.
func TestEndToEndChiTopLevelRewrittenPath(t *testing.T) {
	for _, tt := range []struct {
		name, method, route string
		rewrite             func(http.Handler) http.Handler
		paths               []string
	}{
		{"StripSlashes", "POST", "/login", chimw.StripSlashes, []string{"/login/", "/login/"}},
		{"CleanPath", "POST", "/login", chimw.CleanPath, []string{"//login", "/x/../login"}},
		{"RawPath", "GET", "/users/{id}", nil, []string{"/users/a%2Fb", "/users/%2F"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock, store := clockedStore(t)
			ip, _ := keys(t)
			r := chi.NewRouter()
			rules := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.PerMinute("once", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes(tt.method+" "+tt.route))),
			}, chiFind(r))
			if tt.rewrite != nil {
				r.Use(tt.rewrite)
			}
			r.Use(rules.Handler)
			r.Method(tt.method, tt.route, hello)
			srv := httptest.NewServer(r)
			defer srv.Close()
			var steps []req
			for i, p := range tt.paths {
				st := req{0, tt.method, p, "198.51.100.9", "", 200, `"once";r=0;t=60`, ""}
				if i > 0 {
					st.status, st.retryAfter = 429, "60"
				}
				steps = append(steps, st)
			}
			script(t, srv, clock, steps)
		})
	}
}

// TestEndToEndChiTopLevelTrailingSlash: the documented pattern function
// answers the pattern as chi's RoutePattern gives it once routed, so a
// top-level rule table on "GET /api" limits the root of r.Route("/api"),
// asked for with /api/ (Find itself answers "/api/", with the slash
// RoutePattern trims), and one on "/users/" a route registered as such.
func TestEndToEndChiTopLevelTrailingSlash(t *testing.T) {
	clock, store := clockedStore(t)
	ip, _ := keys(t)
	r := chi.NewRouter()
	rules := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("once", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes("GET /api"))),
	}, chiFind(r))
	r.Use(rules.Handler)
	r.Route("/api", func(r chi.Router) { r.Get("/", hello) })
	srv := httptest.NewServer(r)
	defer srv.Close()
	script(t, srv, clock, []req{
		{0, "GET", "/api/", "198.51.100.9", "", 200, `"once";r=0;t=60`, ""},
		{0, "GET", "/api/", "198.51.100.9", "", 429, `"once";r=0;t=60`, "60"},
	})
}

// TestEndToEndChiSubRouterRules: inside chi's r.Route, a rule table in an
// r.Group runs after the sub-router has routed and sees the whole pattern
// ("/api/login"); one in the sub-router's own r.Use runs before it routes,
// sees only the mount's "/api/*", and so never applies its route policies
// (the package doc said r.Route was a place for it).
func TestEndToEndChiSubRouterRules(t *testing.T) {
	for _, group := range []bool{true, false} {
		t.Run(map[bool]string{true: "Group", false: "Use"}[group], func(t *testing.T) {
			clock, store := clockedStore(t)
			ip, _ := keys(t)
			rules := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.PerMinute("once", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes("POST /api/login"))),
			})
			r := chi.NewRouter()
			r.Route("/api", func(r chi.Router) {
				if group {
					r.Group(func(r chi.Router) {
						r.Use(rules.Handler)
						r.Post("/login", hello)
					})
					return
				}
				r.Use(rules.Handler)
				r.Post("/login", hello)
			})
			srv := httptest.NewServer(r)
			defer srv.Close()
			steps := []req{
				{0, "POST", "/api/login", "198.51.100.10", "", 200, `"once";r=0;t=60`, ""},
				{0, "POST", "/api/login", "198.51.100.10", "", 429, `"once";r=0;t=60`, "60"},
			}
			if !group {
				steps = []req{
					{0, "POST", "/api/login", "198.51.100.10", "", 200, "-", ""},
					{0, "POST", "/api/login", "198.51.100.10", "", 200, "-", ""},
				}
			}
			script(t, srv, clock, steps)
		})
	}
}

// TestEndToEndChiTopLevelRules installs a rule table with r.Use on chi's
// top-level router, which runs before routing: the pattern function asks the
// router which route the request will take (chi's Find).
func TestEndToEndChiTopLevelRules(t *testing.T) {
	clock, store := clockedStore(t)
	ip, _ := keys(t)
	r := chi.NewRouter()
	rules, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerMinute("item-writes", 2, ip, policy.WithRoutes("PUT /items/{id}"))),
	}, chiFind(r))
	if err != nil {
		t.Fatal(err)
	}
	r.Use(rules.Handler)
	r.Put("/items/{id}", hello)
	r.Get("/items/{id}", hello)
	srv := httptest.NewServer(r)
	defer srv.Close()
	script(t, srv, clock, []req{
		{0, "PUT", "/items/1", "198.51.100.5", "", 200, `"item-writes";r=1;t=120`, ""},
		{0, "PUT", "/items/2", "198.51.100.5", "", 200, `"item-writes";r=0;t=90`, ""},
		{0, "PUT", "/items/3", "198.51.100.5", "", 429, `"item-writes";r=0;t=90`, "90"},
		{0, "GET", "/items/3", "198.51.100.5", "", 200, "-", ""},
	})
}

// readmeQuickStart is the README's "Quick start (chi)" example from its
// "Who is asking" comment on, verbatim (TestReadmeQuickStart compares the
// two), on a store with a manual clock.
func readmeQuickStart(store algorithms.Store, home, loginHandler http.HandlerFunc) http.Handler {
	// README:begin
	// Who is asking: the client IP (behind a proxy, add keyfunc.TrustedProxies(...)),
	// and for logins the IP plus the user name tried (nobody is signed in yet).
	ip := keyfunc.Must(keyfunc.IP())
	loginName := func(r *http.Request) (string, error) {
		// Read before the limit is decided: from at most 64 KiB of the body.
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		if name := r.PostFormValue("username"); name != "" {
			return name, nil
		}
		// Answered 400, never a bucket shared by all: the error is in keyfunc.ErrNoKey's family.
		return "", fmt.Errorf("no username in the form: %w", keyfunc.ErrNoKey)
	}
	ipUser := keyfunc.Must(keyfunc.Join(ip, loginName))

	// 10 per second and 100 per minute per IP, checked together as one decision:
	// a request the per-minute policy denies does not eat the per-second quota.
	global := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
	}) // its forwarding check, on by default, logs once a proxy's X-Forwarded-For it ignores
	// 5 login attempts per minute per IP and user name (sliding log).
	login := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ipUser))})

	r := chi.NewRouter()
	r.Use(global.Handler)
	r.Get("/", home)
	r.With(login.Handler).Post("/login", loginHandler)
	// README:end
	return r
}

// readmeBlock returns the lines of the first Go code block after heading
// in README.md, and the lines of readmeQuickStart between its markers, both
// with their indentation removed.
func readmeBlock(t *testing.T, heading string) (readme, tested []string) {
	t.Helper()
	trim := func(lines []string) []string {
		out := make([]string, 0, len(lines))
		for _, l := range lines {
			out = append(out, strings.TrimLeft(l, "\t "))
		}
		return out
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, after, ok = strings.Cut(after, "```go\n")
	if !ok {
		t.Fatalf("README.md has no Go block after %q", heading)
	}
	block, _, _ := strings.Cut(after, "```")
	src, err := os.ReadFile("middleware_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "// README:begin\n")
	code, _, _ = strings.Cut(code, "\t// README:end")
	return trim(strings.Split(strings.TrimSuffix(block, "\n"), "\n")), trim(strings.Split(strings.TrimSuffix(code, "\n"), "\n"))
}

// TestReadmeQuickStart runs the README's chi example as a new user would
// copy it, over HTTP: the headers of a GET, the 429 of the eleventh request
// in a second, and logins throttled per IP and user name.
func TestReadmeQuickStart(t *testing.T) {
	readme, tested := readmeBlock(t, "## Quick start (chi)")
	if len(readme) < len(tested) || !slices.Equal(readme[len(readme)-len(tested):], tested) {
		t.Fatalf("the README's chi example does not end with the code tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(readme, "\n"), strings.Join(tested, "\n"))
	}

	clock, store := clockedStore(t)
	srv := httptest.NewServer(readmeQuickStart(store, hello, hello))
	defer srv.Close()

	type want struct {
		status               int
		policy, rateLimit    string // all field lines, joined by ", "
		retryAfter, violated string
	}
	check := func(name string, resp *http.Response, w want) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := want{resp.StatusCode, strings.Join(resp.Header.Values("RateLimit-Policy"), ", "),
			strings.Join(resp.Header.Values("RateLimit"), ", "), resp.Header.Get("Retry-After"), ""}
		if resp.StatusCode == 429 {
			var p struct {
				Violated []string `json:"violated-policies"`
			}
			if err := json.Unmarshal(body, &p); err != nil || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: 429 %q %q body %s (%v)", name, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), body, err)
			}
			got.violated = strings.Join(p.Violated, ",")
		}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
		}
	}
	const global = `"per-second";q=10;w=1, "per-minute";q=100;w=60`
	get := func() *http.Response {
		resp, err := srv.Client().Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Sliding window counters: a request made at the start of a window
	// weighs on the next one until its end, 2 windows on.
	check("GET 1", get(), want{200, global, `"per-second";r=9;t=2, "per-minute";r=99;t=120`, "", ""})
	for i := 2; i <= 10; i++ {
		get().Body.Close()
	}
	// Ten at t0 weigh 10·(1−e) at e into the next second: the eleventh
	// fits 1.1 s on, Retry-After 2. In the next minute they weigh
	// 10·(1−e/60), at most 9 from e = 6 s: r grows to 91 in 66 s.
	check("GET 11", get(), want{429, global, `"per-second";r=0;t=2, "per-minute";r=90;t=66`, "2", "per-second"})

	clock.Advance(2 * time.Second)
	login := func(name string) *http.Response {
		form := url.Values{}
		if name != "" {
			form.Set("username", name)
		}
		resp, err := srv.Client().PostForm(srv.URL+"/login", form)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	const policies = global + `, "login";q=5;w=60`
	// n requests 2 s into the minute: r = 100−n grows once n·(1−e/60)
	// <= n−1 in the next minute, 58 s + 60/n s on (n = 11: 63.45 s, 64).
	minuteT := map[int]string{11: "64", 12: "63", 13: "63", 14: "63", 15: "62", 16: "62", 17: "62", 18: "62"}
	for i := 1; i <= 5; i++ {
		check("login "+strconv.Itoa(i), login("ann"), want{200, policies,
			`"per-second";r=` + strconv.Itoa(10-i) + `;t=2, "per-minute";r=` + strconv.Itoa(90-i) + ";t=" + minuteT[10+i] +
				`, "login";r=` + strconv.Itoa(5-i) + ";t=61", "", ""})
	}
	// An event exactly 60 s old still counts: the sixth waits 60 s + 1 ns.
	// The global policies, further out, have counted it.
	check("login 6", login("ann"), want{429, policies, `"per-second";r=4;t=2, "per-minute";r=84;t=62, "login";r=0;t=61`, "61", "login"})
	check("login bob", login("bob"), want{200, policies, `"per-second";r=3;t=2, "per-minute";r=83;t=62, "login";r=4;t=61`, "", ""})
	check("login without a name", login(""), want{400, global, `"per-second";r=2;t=2, "per-minute";r=82;t=62`, "", ""})

	// The name is read before the limit is decided, from at most 64 KiB
	// of the body: a form past it has no name, and the read stops there.
	pad := strings.Repeat("x", 64<<10)
	resp, err := srv.Client().PostForm(srv.URL+"/login", url.Values{"username": {"ann"}, "pad": {pad}})
	if err != nil {
		t.Fatal(err)
	}
	check("login past 64 KiB", resp, want{400, global, `"per-second";r=1;t=2, "per-minute";r=81;t=62`, "", ""})
	body := &countingReader{r: strings.NewReader("username=ann&pad=" + strings.Repeat("x", 1<<20))}
	req := httptest.NewRequest(http.MethodPost, "/login", body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	readmeQuickStart(store, hello, hello).ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || body.n > 64<<10+1 {
		t.Errorf("a login form of 1 MiB: status %d after reading %d bytes, want 400 after at most 64 KiB + 1", rec.Code, body.n)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestEndToEndOneDecisionRuleTable puts the global limits and the login
// preset in ONE middleware, a rule table in front of the router (chi's
// top-level r.Use asking chi's Find; a whole ServeMux asking the mux): a
// login denied by the login policy consumes nothing of the global ones,
// unlike nested middlewares (TestEndToEndWriteEndpoints).
func TestEndToEndOneDecisionRuleTable(t *testing.T) {
	for _, router := range []string{"chi", "stdlib"} {
		t.Run(router, func(t *testing.T) {
			clock, store := clockedStore(t)
			ip, ipUser := keys(t)
			policies := []*policy.Policy{
				policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
				policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
				policy.Must(policy.Login(ipUser, policy.WithRoutes("POST /login"))),
			}
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				m := middleware.MustNew(store, policies, chiFind(r))
				r.Use(m.Handler)
				r.Get("/", hello)
				r.Post("/login", hello)
				h = auth(r)
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /{$}", hello)
				mux.Handle("POST /login", hello)
				h = auth(middleware.MustNew(store, policies, middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux))
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			a := "192.0.2.20"
			g := func(sec, min int) string {
				return `"per-second";r=` + strconv.Itoa(sec) + `;t=1, "per-minute";r=` + strconv.Itoa(min) + ";t=60"
			}
			steps := []req{{0, "GET", "/", a, "", 200, g(9, 99), ""}}
			for i := 1; i <= 5; i++ {
				steps = append(steps, req{0, "POST", "/login", a, "ann", 200, g(9-i, 99-i) + `, "login";r=` + strconv.Itoa(5-i) + ";t=61", ""})
			}
			steps = append(steps,
				// Denied by login: the global allowances stay as they were.
				req{0, "POST", "/login", a, "ann", 429, g(4, 94) + `, "login";r=0;t=61`, "61"},
				req{0, "POST", "/login", a, "ann", 429, g(4, 94) + `, "login";r=0;t=61`, "61"},
				req{0, "GET", "/", a, "", 200, g(3, 93), ""},
			)
			script(t, srv, clock, steps)
		})
	}
}

// TestEndToEndChiUnderServeMux serves a chi router through a ServeMux
// (mux.Handle("/", r)), with a rule table in chi's top-level r.Use and no
// pattern function: before chi routes, r.Pattern is the ServeMux's "/",
// which is not the request's route, so no route policy applies there (a
// policy on "GET /" limited every path).
func TestEndToEndChiUnderServeMux(t *testing.T) {
	clock, store := clockedStore(t)
	ip, _ := keys(t)
	home := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("home", 1, ip, policy.WithRoutes("GET /"))),
	})
	r := chi.NewRouter()
	r.Use(home.Handler)
	r.Get("/", hello)
	r.Get("/items/{id}", hello)
	r.With(home.Handler).Get("/inline", hello) // routed: pattern "/inline"
	mux := http.NewServeMux()
	mux.Handle("/", r)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	script(t, srv, clock, []req{
		{0, "GET", "/items/1", "198.51.100.6", "", 200, "-", ""},
		{0, "GET", "/items/2", "198.51.100.6", "", 200, "-", ""},
		{0, "GET", "/inline", "198.51.100.6", "", 200, "-", ""},
	})
}

// TestEndToEndChiTopLevelGetHead: chi serves HEAD with the GET handler
// only behind its middleware.GetHead, which routes HEAD as GET by setting
// the route context's RouteMethod. A top-level rule table whose pattern
// function asked Find with req.Method found no HEAD route, so HEAD
// requests went around the "GET /items/{id}" policy; the documented
// function asks with the RouteMethod when set.
func TestEndToEndChiTopLevelGetHead(t *testing.T) {
	clock, store := clockedStore(t)
	ip, _ := keys(t)
	r := chi.NewRouter()
	rules := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("item-reads", 2, ip, policy.WithRoutes("GET /items/{id}"))),
	}, chiFind(r))
	r.Use(chimw.GetHead)
	r.Use(rules.Handler)
	r.Get("/items/{id}", hello)
	srv := httptest.NewServer(r)
	defer srv.Close()
	script(t, srv, clock, []req{
		{0, "HEAD", "/items/1", "198.51.100.7", "", 200, `"item-reads";r=1;t=120`, ""},
		{0, "GET", "/items/2", "198.51.100.7", "", 200, `"item-reads";r=0;t=90`, ""},
		{0, "HEAD", "/items/3", "198.51.100.7", "", 429, `"item-reads";r=0;t=90`, "90"},
	})
}

// oneRoute serves h behind m on GET path, through a chi router ("chi") or
// a ServeMux, until the test ends.
func oneRoute(t *testing.T, router, path string, m *middleware.Middleware, h http.Handler) *httptest.Server {
	t.Helper()
	var root http.Handler
	if router == "chi" {
		r := chi.NewRouter()
		r.With(m.Handler).Get(path, h.ServeHTTP)
		root = r
	} else {
		mux := http.NewServeMux()
		mux.Handle("GET "+path, m.Handler(h))
		root = mux
	}
	srv := httptest.NewServer(root)
	t.Cleanup(srv.Close)
	return srv
}

// refundSignal is a memory store that tells when a refund is done.
type refundSignal struct {
	*algorithms.MemoryStore
	done chan struct{}
}

func (s refundSignal) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	defer func() { s.done <- struct{}{} }()
	return s.MemoryStore.Refund(ctx, dst, checks, ds, waited)
}

// TestEndToEndQueueClientLeaves: an export endpoint shaped to one request a
// second by a leaky_queue policy, through chi and a ServeMux over real HTTP.
// A client that hangs up while its request is held is not served, and its
// place, the queue's last, goes to the next client: that one waits one
// second, not two.
func TestEndToEndQueueClientLeaves(t *testing.T) {
	for _, name := range []string{"chi", "stdlib"} {
		t.Run(name, func(t *testing.T) {
			clock, mem := clockedStore(t)
			store := refundSignal{mem, make(chan struct{}, 1)}
			ip, _ := keys(t)
			queue := policy.Must(policy.New("export", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}, ip))
			var mu sync.Mutex
			var waits []time.Duration
			holding := make(chan struct{}, 1)
			m := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					mu.Lock()
					waits = append(waits, d)
					first := len(waits) == 1
					mu.Unlock()
					if !first {
						return nil // served after its wait
					}
					holding <- struct{}{}
					<-ctx.Done() // held until the client hangs up
					return ctx.Err()
				}))
			served := 0
			export := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				served++
				mu.Unlock()
				io.WriteString(w, "export")
			})
			srv := oneRoute(t, name, "/export", m, export)

			if resp := do(t, srv, "GET", "/export", "198.51.100.7", ""); resp.StatusCode != 200 {
				t.Fatalf("first export: %d", resp.StatusCode)
			} else {
				resp.Body.Close()
			}
			// The second is held for 1 s; its client hangs up.
			ctx, cancel := context.WithCancel(context.Background())
			r, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/export", nil)
			r.Header.Set("X-Forwarded-For", "198.51.100.7")
			errc := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Do(r)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			<-holding
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("the client that hung up got %v", err)
			}
			<-store.done // the server saw the hang-up and gave the place back
			resp := do(t, srv, "GET", "/export", "198.51.100.7", "")
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if resp.StatusCode != 200 || served != 2 {
				t.Errorf("third export: %d, served %d; want 200 and 2 (the hung-up one not served)", resp.StatusCode, served)
			}
			if want := []time.Duration{time.Second, time.Second}; !slices.Equal(waits, want) {
				t.Errorf("waits %v, want %v: the third takes the place the second gave back", waits, want)
			}
		})
	}
}

// TestEndToEndNestedMiddlewareBetween: three nested middlewares with a
// single-valued profile (draft-6), through chi (r.Use, a Group's r.Use,
// r.With) and a ServeMux (around the mux, then twice around the handler).
// The middle one writes no headers for the request: its one policy, per
// user, is skipped for an anonymous client (or its store fails and it lets
// the request through). The innermost one must still see the outermost
// one's values: the header reports the policy with the lowest remaining of
// both, and RateLimit-Policy lists both. It took the middle one's Result
// for the outer one and found no headers there, so it overwrote the outer
// values (Remaining 4 where the outer one had 1 left) and its policy list.
func TestEndToEndNestedMiddlewareBetween(t *testing.T) {
	for _, middle := range []string{"skipped", "store failing"} {
		for _, router := range []string{"chi", "stdlib"} {
			t.Run(middle+"/"+router, func(t *testing.T) {
				_, store := clockedStore(t)
				ip, ipUser := keys(t)
				draft6 := middleware.WithHeaders(middleware.Draft6)
				outer := middleware.MustNew(store, []*policy.Policy{
					policy.Must(policy.PerSecond("per-second", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
				}, draft6)
				midStore := algorithms.Store(store)
				if middle == "store failing" {
					midStore = failingStore{}
				}
				mid := middleware.MustNew(midStore, []*policy.Policy{
					policy.Must(policy.PerMinute("per-user", 50, ipUser, policy.OnKeyError(policy.SkipPolicy))),
				}, draft6)
				login := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ip))}, draft6)
				var h http.Handler
				if router == "chi" {
					r := chi.NewRouter()
					r.Use(outer.Handler)
					r.Group(func(r chi.Router) {
						r.Use(mid.Handler)
						r.With(login.Handler).Post("/login", hello)
					})
					h = r
				} else {
					mux := http.NewServeMux()
					mux.Handle("POST /login", mid.Handler(login.Handler(hello)))
					h = outer.Handler(mux)
				}
				srv := httptest.NewServer(auth(h))
				defer srv.Close()
				user := ""
				if middle == "store failing" {
					user = "ann" // the middle policy has a key: the store is called
				}
				for i, want := range []string{"2 1 1 [2;w=1 5;w=60]", "2 0 1 [2;w=1 5;w=60]"} {
					r, err := http.NewRequest("POST", srv.URL+"/login", nil)
					if err != nil {
						t.Fatal(err)
					}
					r.Header.Set("X-Forwarded-For", "198.51.100.11")
					if user != "" {
						r.Header.Set("X-User", user)
					}
					resp, err := srv.Client().Do(r)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					got := resp.Header.Get("RateLimit-Limit") + " " + resp.Header.Get("RateLimit-Remaining") + " " +
						resp.Header.Get("RateLimit-Reset") + " [" + strings.Join(resp.Header.Values("RateLimit-Policy"), " ") + "]"
					if resp.StatusCode != 200 || got != want {
						t.Errorf("login %d: %d %s, want 200 %s", i+1, resp.StatusCode, got, want)
					}
				}
			})
		}
	}
}

// TestEndToEndNestedProfilesDiffer: nested middlewares built with different
// header profiles (a global one from a configuration file asking for
// draft-7, a login one built in code with the default) answer in ONE
// profile, the outer one's, so that every field parses: the inner one
// added an IETF list member to draft-7's RateLimit dictionary (the field no
// longer parsed as either) or, the other way round, replaced the IETF
// RateLimit-Policy list with its draft-6 one (dropping the outer policies
// and leaving an IETF RateLimit naming policies RateLimit-Policy did not
// list).
func TestEndToEndNestedProfilesDiffer(t *testing.T) {
	for _, tt := range []struct {
		outer, inner middleware.Profile
		want         map[string][]string
	}{
		{middleware.Draft7, middleware.IETF, map[string][]string{
			"RateLimit":        {"limit=5, remaining=4, reset=61"}, // the lowest remaining
			"RateLimit-Policy": {"10;w=1, 100;w=60", "5;w=60"},
		}},
		{middleware.IETF, middleware.Draft6, map[string][]string{
			"RateLimit":        {`"per-second";r=9;t=1, "per-minute";r=99;t=60`, `"login";r=4;t=61`},
			"RateLimit-Policy": {`"per-second";q=10;w=1, "per-minute";q=100;w=60`, `"login";q=5;w=60`},
		}},
		{middleware.Legacy, middleware.Draft6, map[string][]string{
			"X-RateLimit-Limit":     {"5"},
			"X-RateLimit-Remaining": {"4"},
			"X-RateLimit-Reset":     {"61"},
		}},
	} {
		t.Run(tt.outer.String()+"/"+tt.inner.String(), func(t *testing.T) {
			_, store := clockedStore(t)
			ip, _ := keys(t)
			global := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
				policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
			}, middleware.WithHeaders(tt.outer))
			login := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ip))}, middleware.WithHeaders(tt.inner))
			r := chi.NewRouter()
			r.Use(global.Handler)
			r.With(login.Handler).Post("/login", hello)
			srv := httptest.NewServer(r)
			defer srv.Close()
			resp := do(t, srv, "POST", "/login", "198.51.100.12", "")
			resp.Body.Close()
			got := map[string][]string{}
			for k, v := range resp.Header {
				if strings.Contains(strings.ToLower(k), "ratelimit") {
					got[http.CanonicalHeaderKey(k)] = v
				}
			}
			want := map[string][]string{}
			for k, v := range tt.want {
				want[http.CanonicalHeaderKey(k)] = v
			}
			if resp.StatusCode != 200 || !maps.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%d %q\nwant 200 %q", resp.StatusCode, got, want)
			}
		})
	}
}

// eagerGzip stands for a compressing middleware that, like gorilla/handlers'
// CompressHandler, sets Content-Encoding: gzip before calling its handler
// and compresses whatever the handler writes (this one leaves any
// Content-Length alone).
func eagerGzip(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		next.ServeHTTP(gzipWriter{w, gz}, r)
	})
}

type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g gzipWriter) Write(p []byte) (int, error) { return g.gz.Write(p) }

// TestEndToEndRejectionsCompressed: behind a compressing middleware that
// sets Content-Encoding before the limiter runs, the middleware's own
// answers (429, 400, 503) reach the client as problem+json it can read.
// They deleted Content-Encoding (as http.Error once did, golang/go#66343),
// so the gzip bytes went out as if they were JSON, with a Content-Length
// of the uncompressed body.
func TestEndToEndRejectionsCompressed(t *testing.T) {
	_, store := clockedStore(t)
	ip, ipUser := keys(t)
	one := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow)))})
	keyed := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-user", 5, ipUser))})
	closed := middleware.MustNew(failingStore{}, []*policy.Policy{policy.Must(policy.PerMinute("closed", 5, ip))},
		middleware.OnStoreError(middleware.FailClosed(time.Second)))
	r := chi.NewRouter()
	r.Use(eagerGzip)
	r.With(one.Handler).Get("/once", hello)
	r.With(keyed.Handler).Get("/keyed", hello)
	r.With(closed.Handler).Get("/closed", hello)
	srv := httptest.NewServer(r)
	defer srv.Close()
	get := func(path string) (*http.Response, []byte) {
		resp := do(t, srv, "GET", path, "198.51.100.13", "")
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: reading the body: %v", path, err)
		}
		return resp, body
	}
	if resp, body := get("/once"); resp.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("GET /once: %d %q, want 200 hello", resp.StatusCode, body)
	}
	for _, tt := range []struct {
		path   string
		status int
	}{{"/once", 429}, {"/keyed", 400}, {"/closed", 503}} {
		resp, body := get(tt.path)
		var p struct {
			Status int `json:"status"`
		}
		if err := json.Unmarshal(body, &p); resp.StatusCode != tt.status || err != nil || p.Status != tt.status ||
			resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: %d %q body %q (%v), want %d problem+json", tt.path, resp.StatusCode,
				resp.Header.Get("Content-Type"), body, err, tt.status)
		}
	}
}
