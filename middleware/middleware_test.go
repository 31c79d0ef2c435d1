package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// t0 is a minute boundary.
var t0 = time.Unix(1_700_000_040, 0)

func newStore(t testing.TB) (*algorithms.MemoryStore, *algotest.Clock) {
	t.Helper()
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, clock
}

// remote keys by RemoteAddr.
var remote keyfunc.Func = func(r *http.Request) (string, error) { return r.RemoteAddr, nil }

// user keys by the X-User header.
var user keyfunc.Func = func(r *http.Request) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", keyfunc.ErrNoUser
}

func fixed(name string, limit int64, window time.Duration, key keyfunc.Func, opts ...policy.Option) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: window}
	return policy.Must(policy.New(name, spec, key, opts...))
}

// ok is the downstream handler: it answers 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

type step struct {
	advance    time.Duration
	status     int
	rateLimit  string
	retryAfter string
}

func run(t *testing.T, h http.Handler, clock *algotest.Clock, steps []step) {
	t.Helper()
	for i, s := range steps {
		clock.Advance(s.advance)
		w := serve(h, "GET", "/")
		if w.Code != s.status || w.Header().Get("RateLimit") != s.rateLimit || w.Header().Get("Retry-After") != s.retryAfter {
			t.Errorf("step %d: %d RateLimit %q Retry-After %q, want %d %q %q", i, w.Code,
				w.Header().Get("RateLimit"), w.Header().Get("Retry-After"), s.status, s.rateLimit, s.retryAfter)
		}
	}
}

func TestStackedSequence(t *testing.T) {
	store, clock := newStore(t)
	m, err := middleware.New(store, []*policy.Policy{
		fixed("per-second", 3, time.Second, remote),
		fixed("per-minute", 5, time.Minute, remote),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(ok)
	run(t, h, clock, []step{
		{0, 200, `"per-second";r=2;t=1, "per-minute";r=4;t=60`, ""},
		{0, 200, `"per-second";r=1;t=1, "per-minute";r=3;t=60`, ""},
		{0, 200, `"per-second";r=0;t=1, "per-minute";r=2;t=60`, ""},
		{0, 429, `"per-second";r=0;t=1, "per-minute";r=2;t=60`, "1"},
		{time.Second, 200, `"per-second";r=2;t=1, "per-minute";r=1;t=59`, ""},
		{0, 200, `"per-second";r=1;t=1, "per-minute";r=0;t=59`, ""},
		// Denied by the minute: the second's allowance is not used up.
		{0, 429, `"per-second";r=1;t=1, "per-minute";r=0;t=59`, "59"},
		{0, 429, `"per-second";r=1;t=1, "per-minute";r=0;t=59`, "59"},
		{59 * time.Second, 200, `"per-second";r=2;t=1, "per-minute";r=4;t=60`, ""},
	})
	w := serve(h, "GET", "/")
	if got := w.Header().Get("RateLimit-Policy"); got != `"per-second";q=3;w=1, "per-minute";q=5;w=60` {
		t.Errorf("RateLimit-Policy = %s", got)
	}
	if got := m.Stats().Denied; got != 3 {
		t.Errorf("Stats().Denied = %d, want 3", got)
	}
}

func TestProblemBody(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("tiny", 1, time.Minute, remote)})
	h := m.Handler(ok)
	serve(h, "GET", "/")
	w := serve(h, "GET", "/")
	if w.Code != 429 {
		t.Fatalf("status %d, want 429", w.Code)
	}
	for k, v := range map[string]string{"Content-Type": "application/problem+json", "Cache-Control": "no-store", "Retry-After": "60"} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	var p struct {
		Type     string   `json:"type"`
		Title    string   `json:"title"`
		Status   int      `json:"status"`
		Detail   string   `json:"detail"`
		Violated []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	if p.Type != middleware.ProblemTypeQuotaExceeded || p.Title != "Too Many Requests" || p.Status != 429 ||
		p.Detail != "Quota exceeded for tiny; retry in 60 seconds." || len(p.Violated) != 1 || p.Violated[0] != "tiny" {
		t.Errorf("problem = %+v", p)
	}
}

func TestKeyErrors(t *testing.T) {
	var errs []error
	onError := middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })
	for _, tt := range []struct {
		action policy.KeyAction
		status int
	}{{policy.RejectBadRequest, 400}, {policy.RejectForbidden, 403}, {policy.SkipPolicy, 200}} {
		errs = nil
		store, _ := newStore(t)
		name := "u-" + tt.action.String()
		m := middleware.MustNew(store, []*policy.Policy{
			fixed("ip", 10, time.Minute, remote),
			fixed(name, 10, time.Minute, user, policy.OnKeyError(tt.action)),
		}, onError)
		h := m.Handler(ok)
		w := serve(h, "GET", "/")
		if w.Code != tt.status {
			t.Errorf("%s: status %d, want %d", tt.action, w.Code, tt.status)
		}
		if tt.status == 200 {
			if got := w.Header().Get("RateLimit"); got != `"ip";r=9;t=60` {
				t.Errorf("%s: RateLimit %q, want only the ip policy", tt.action, got)
			}
			if len(errs) != 0 {
				t.Errorf("%s: errors reported for a skipped policy: %v", tt.action, errs)
			}
			continue
		}
		var ke *policy.KeyError
		if len(errs) != 1 || !errors.As(errs[0], &ke) || !errors.Is(errs[0], keyfunc.ErrNoUser) {
			t.Errorf("%s: errors %v, want one KeyError", tt.action, errs)
		}
		if !strings.Contains(w.Body.String(), name) || w.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: body %q", tt.action, w.Body)
		}
		// Nothing was consumed from the ip policy.
		w = serve(h, "GET", "/", "X-User", "ann")
		if got := w.Header().Get("RateLimit"); !strings.HasPrefix(got, `"ip";r=9;`) {
			t.Errorf("%s: after a rejected request RateLimit %q, want ip r=9", tt.action, got)
		}
		if m.Stats().KeyRejected != 1 {
			t.Errorf("%s: KeyRejected %d, want 1", tt.action, m.Stats().KeyRejected)
		}
	}
}

func TestCost(t *testing.T) {
	store, _ := newStore(t)
	weighted := fixed("weighted", 10, time.Minute, remote, policy.WithCost(func(r *http.Request) int64 {
		return int64(len(r.URL.Query()["item"]))
	}))
	h := middleware.MustNew(store, []*policy.Policy{weighted}).Handler(ok)
	if w := serve(h, "GET", "/?item=a&item=b&item=c"); w.Code != 200 || w.Header().Get("RateLimit") != `"weighted";r=7;t=60` {
		t.Errorf("cost 3: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
	for _, target := range []string{"/", "/?" + strings.Repeat("item=x&", 11)} {
		w := serve(h, "GET", target)
		if w.Code != 429 || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), `"violated-policies":["weighted"]`) {
			t.Errorf("%s: %d Retry-After %q body %s, want 429 without Retry-After", target, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
}

// failing is a store that fails, counting its calls.
type failing struct {
	mu    sync.Mutex
	calls int
}

var errDown = errors.New("redis: connection refused to 10.0.0.7:6379")

func (f *failing) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return nil, errDown
}

func TestStoreFailure(t *testing.T) {
	ps := func() []*policy.Policy { return []*policy.Policy{fixed("p", 1, time.Minute, remote)} }
	var errs []error
	onError := middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) })

	t.Run("open", func(t *testing.T) {
		errs = nil
		m := middleware.MustNew(&failing{}, ps(), onError)
		var res *middleware.Result
		h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { res, _ = middleware.FromContext(r.Context()) }))
		for range 3 {
			w := serve(h, "GET", "/")
			if w.Code != 200 || w.Header().Get("RateLimit") != "" {
				t.Errorf("fail open: %d RateLimit %q", w.Code, w.Header().Get("RateLimit"))
			}
		}
		if len(errs) != 3 || !errors.Is(errs[0], errDown) {
			t.Errorf("errors %v, want 3 wrapping errDown", errs)
		}
		if s := m.Stats(); s.FailedOpen != 3 || s.StoreErrors != 3 {
			t.Errorf("Stats %+v", s)
		}
		if res == nil || !errors.Is(res.Err(), errDown) || res.Taken() {
			t.Errorf("FromContext after failure = %+v", res)
		}
	})
	t.Run("closed", func(t *testing.T) {
		errs = nil
		m := middleware.MustNew(&failing{}, ps(), onError, middleware.OnStoreError(middleware.FailClosed(1500*time.Millisecond)))
		w := serve(m.Handler(ok), "GET", "/")
		if w.Code != 503 || w.Header().Get("Retry-After") != "2" || w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("fail closed: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
		if strings.Contains(w.Body.String(), "10.0.0.7") || strings.Contains(w.Body.String(), "redis") {
			t.Errorf("error text reached the client: %s", w.Body)
		}
		if len(errs) != 1 || m.Stats().FailedClosed != 1 {
			t.Errorf("errors %v stats %+v", errs, m.Stats())
		}
	})
	t.Run("fallback", func(t *testing.T) {
		errs = nil
		store, _ := newStore(t)
		m := middleware.MustNew(&failing{}, ps(), onError, middleware.OnStoreError(middleware.FallBack(store)))
		var res *middleware.Result
		h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { res, _ = middleware.FromContext(r.Context()) }))
		if w := serve(h, "GET", "/"); w.Code != 200 || w.Header().Get("RateLimit") != `"p";r=0;t=60` {
			t.Errorf("fallback first: %d %q", w.Code, w.Header().Get("RateLimit"))
		}
		if res == nil || !res.Fallback() || !errors.Is(res.Err(), errDown) {
			t.Errorf("FromContext = %+v, want Fallback with the store error", res)
		}
		if w := serve(h, "GET", "/"); w.Code != 429 {
			t.Errorf("fallback second: %d, want 429 from the fallback store", w.Code)
		}
		if m.Stats().Fallback != 2 || len(errs) != 2 {
			t.Errorf("Stats %+v errors %d", m.Stats(), len(errs))
		}
		// Both stores failing: open.
		m = middleware.MustNew(&failing{}, ps(), onError, middleware.OnStoreError(middleware.FallBack(&failing{})))
		errs = nil
		if w := serve(m.Handler(ok), "GET", "/"); w.Code != 200 || len(errs) != 2 {
			t.Errorf("both failing: %d, %d errors", w.Code, len(errs))
		}
	})
	t.Run("breaker", func(t *testing.T) {
		errs = nil
		f := &failing{}
		clock := algotest.NewClock(t0)
		m := middleware.MustNew(f, ps(), onError, middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock))
		h := m.Handler(ok)
		for range 5 {
			serve(h, "GET", "/")
		}
		if f.calls != 2 || m.Stats().BreakerOpen != 3 || !errors.Is(errs[4], middleware.ErrBreakerOpen) {
			t.Errorf("breaker: %d store calls (want 2), stats %+v", f.calls, m.Stats())
		}
		clock.Advance(10 * time.Second)
		serve(h, "GET", "/") // the probe
		serve(h, "GET", "/")
		if f.calls != 3 {
			t.Errorf("after the cooldown: %d store calls, want 3 (one probe)", f.calls)
		}
	})
}

func TestShadow(t *testing.T) {
	store, _ := newStore(t)
	var shadowed []*middleware.Result
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("p", 1, time.Minute, remote),
		fixed("u", 5, time.Minute, user),
	}, middleware.WithShadow(func(_ *http.Request, res *middleware.Result) { shadowed = append(shadowed, res) }))
	h := m.Handler(ok)
	w1 := serve(h, "GET", "/", "X-User", "a")
	w2 := serve(h, "GET", "/", "X-User", "a")
	w3 := serve(h, "GET", "/") // no user: would be 400
	for i, w := range []*httptest.ResponseRecorder{w1, w2, w3} {
		if w.Code != 200 || w.Body.String() != "ok" {
			t.Errorf("request %d: %d %q, want 200 ok", i+1, w.Code, w.Body)
		}
	}
	if got := w2.Header().Get("RateLimit"); got != `"p";r=0;t=60, "u";r=4;t=60` {
		t.Errorf("shadow headers %q", got)
	}
	if len(shadowed) != 2 || shadowed[0].Allowed() || !shadowed[0].Shadow() || !errors.Is(shadowed[1].Err(), policy.ErrKey) {
		t.Errorf("shadow reports %v", shadowed)
	}
	if m.Stats().ShadowDenied != 2 || m.Stats().Denied != 0 {
		t.Errorf("Stats %+v", m.Stats())
	}
}

func TestSkip(t *testing.T) {
	store, _ := newStore(t)
	ps := []*policy.Policy{fixed("p", 1, time.Minute, remote)}
	skipHealth := middleware.MustNew(store, ps, middleware.WithSkip(middleware.SkipPaths("/healthz"))).Handler(ok)
	for range 3 {
		if w := serve(skipHealth, "GET", "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
			t.Errorf("/healthz: %d %q", w.Code, w.Header().Get("RateLimit"))
		}
	}
	skipNet := middleware.MustNew(store, ps, middleware.WithSkip(middleware.SkipPrefixes(netip.MustParsePrefix("192.0.2.0/24")))).Handler(ok)
	for range 3 {
		if w := serve(skipNet, "GET", "/"); w.Code != 200 { // httptest's RemoteAddr is 192.0.2.1:1234
			t.Errorf("allow-listed peer: %d", w.Code)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	for _, addr := range []string{"198.51.100.1:80", "[::ffff:198.51.100.1]:80", "garbage"} {
		r.RemoteAddr = addr
		if middleware.SkipPrefixes(netip.MustParsePrefix("192.0.2.0/24"))(r) {
			t.Errorf("SkipPrefixes(%s) = true", addr)
		}
	}
	r.RemoteAddr = "[::ffff:192.0.2.9]:80"
	if !middleware.SkipPrefixes(netip.MustParsePrefix("192.0.2.0/24"))(r) {
		t.Error("SkipPrefixes does not unmap IPv4-mapped peers")
	}
	// A link-local peer's RemoteAddr carries its zone, as net/http writes
	// it: the allow-listed prefix still holds the address.
	for _, addr := range []string{"[fe80::1%eth0]:80", "fe80::1%eth0"} {
		r.RemoteAddr = addr
		if !middleware.SkipPrefixes(netip.MustParsePrefix("fe80::/10"))(r) {
			t.Errorf("SkipPrefixes(fe80::/10) does not skip %s", addr)
		}
	}
	// A prefix written in its IPv4-mapped form (as a dual-stack listener
	// shows the peers, or as keyfunc.TrustedProxies takes it) holds the
	// IPv4 peers it maps, in either notation; it holds no IPv6 peer.
	mapped := middleware.SkipPrefixes(netip.MustParsePrefix("::ffff:192.0.2.0/120"))
	for _, addr := range []string{"192.0.2.9:80", "[::ffff:192.0.2.9]:80"} {
		r.RemoteAddr = addr
		if !mapped(r) {
			t.Errorf("SkipPrefixes(::ffff:192.0.2.0/120) does not skip %s", addr)
		}
	}
	for _, addr := range []string{"198.51.100.1:80", "[::c000:209]:80", "[2001:db8::1]:80"} {
		r.RemoteAddr = addr
		if mapped(r) {
			t.Errorf("SkipPrefixes(::ffff:192.0.2.0/120) skips %s", addr)
		}
	}
}

func TestLeakyQueue(t *testing.T) {
	store, clock := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 2 * time.Second}, remote))
	var waits []time.Duration
	var errs []error
	abandon := func() {}
	m := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithWait(func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		abandon() // the client goes away while held
		return ctx.Err()
	}), middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	served := 0
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	codes := []int{}
	for range 4 {
		codes = append(codes, serve(h, "GET", "/").Code)
	}
	if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	if len(waits) != 2 || waits[0] != time.Second || waits[1] != 2*time.Second || served != 3 {
		t.Errorf("waits %v served %d, want [1s 2s] and 3", waits, served)
	}
	// A client that goes away while held is not served; its place, the
	// queue's last, goes back.
	clock.Advance(3 * time.Second)
	serve(h, "GET", "/") // departs at once
	ctx, cancel := context.WithCancel(context.Background())
	abandon = cancel
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	abandon = func() {}
	if w.Code != 503 || served != 4 || m.Stats().Abandoned != 1 || m.Stats().Delayed != 3 {
		t.Errorf("abandoned: %d served %d stats %+v", w.Code, served, m.Stats())
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) || strings.Contains(w.Body.String(), "cancel") {
		t.Errorf("abandoned: errors reported %v (want one wrapping context.Canceled), body %s", errs, w.Body)
	}
	if got := serve(h, "GET", "/"); got.Code != 200 || waits[len(waits)-1] != time.Second {
		t.Errorf("after an abandoned request: %d, wait %v; want 200 after 1s (the abandoned last place given back)", got.Code, waits[len(waits)-1])
	}
	// A request whose client is gone before the store call is not served.
	served = 0
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if w.Code != 503 || served != 0 || m.Stats().FailedOpen != 0 {
		t.Errorf("cancelled request: %d served %d stats %+v", w.Code, served, m.Stats())
	}
}

// TestLeakyQueueDeadlineBeforeTurn: a request whose context ends before
// its turn (a server-side timeout shorter than the queue's delay) is not
// held only to be refused when its deadline comes: it gets a 503 with
// Retry-After at once, without waiting, and its place goes back (as
// x/time/rate's Wait does); one whose deadline leaves room waits.
func TestLeakyQueueDeadlineBeforeTurn(t *testing.T) {
	store, _ := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}, remote))
	var waits []time.Duration
	var errs []error
	m := middleware.MustNew(store, []*policy.Policy{queue},
		middleware.WithWait(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return nil
		}),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	served := 0
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	within := func(d time.Duration) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(beforeTurn(d)))
		return w
	}
	serve(h, "GET", "/") // departs at once; the next turn is 10 s away
	w := within(time.Second)
	if w.Code != 503 || w.Header().Get("Retry-After") != "10" || len(waits) != 0 || served != 1 {
		t.Errorf("deadline before the turn: %d, Retry-After %q, waits %v, served %d; want 503, 10, no wait, 1",
			w.Code, w.Header().Get("Retry-After"), waits, served)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) || m.Stats().Abandoned != 1 {
		t.Errorf("errors %v, stats %+v; want one matching context.DeadlineExceeded, one abandoned", errs, m.Stats())
	}
	// Its place came back: the next request waits 10 s, not 20 s.
	if w := within(time.Hour); w.Code != 200 || !slices.Equal(waits, []time.Duration{10 * time.Second}) || served != 2 {
		t.Errorf("after it: %d, waits %v, served %d; want 200 after one 10 s wait", w.Code, waits, served)
	}
}

// TestLeakyQueueRefundsTheDecidingStore: an abandoned request's queue
// place goes back to the store that decided it, the fallback store when
// the primary failed; a refund that fails reaches the error hook.
func TestLeakyQueueRefundsTheDecidingStore(t *testing.T) {
	fb, clock := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}, remote))
	var waits []time.Duration
	leave := false
	var errs []error
	primary := &failing{}
	m := middleware.MustNew(primary, []*policy.Policy{queue},
		middleware.WithClock(clock),
		middleware.OnStoreError(middleware.FallBack(fb)),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			if leave {
				return context.Canceled
			}
			return nil
		}))
	h := m.Handler(ok)
	serve(h, "GET", "/") // departs at once
	leave = true
	if w := serve(h, "GET", "/"); w.Code != 503 {
		t.Fatalf("abandoned request: %d, want 503", w.Code)
	}
	leave = false
	serve(h, "GET", "/")
	if want := []time.Duration{time.Second, time.Second}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v (the fallback store's place given back)", waits, want)
	}

	// A store whose refund fails: the error is reported, the client still
	// gets its 503.
	errs = nil
	bad := refundFails{fb}
	m = middleware.MustNew(bad, []*policy.Policy{queue},
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { return context.Canceled }))
	clock.Advance(time.Minute)
	h = m.Handler(ok)
	serve(h, "GET", "/")
	if w := serve(h, "GET", "/"); w.Code != 503 {
		t.Fatalf("abandoned request with a failing refund: %d, want 503", w.Code)
	}
	if len(errs) != 2 || !errors.Is(errs[1], errDown) || !strings.Contains(errs[1].Error(), "leaky_queue place") {
		t.Errorf("errors reported %v, want the cut-short wait then the failed refund wrapping %v", errs, errDown)
	}
}

// refundFails is a store whose refunds fail.
type refundFails struct{ *algorithms.MemoryStore }

func (refundFails) Refund(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return errDown
}

// ctxBlind is a store that ignores the request context.
type ctxBlind struct{ algorithms.Store }

func (s ctxBlind) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return s.Store.Take(context.Background(), checks...)
}

func TestDefaultWait(t *testing.T) {
	store, _ := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1000, Window: time.Second, MaxDelay: time.Hour}, remote))
	h := middleware.MustNew(ctxBlind{store}, []*policy.Policy{queue}).Handler(ok)
	serve(h, "GET", "/")
	// The second request is held 1 ms by a real timer (the store's clock
	// does not move, so this is the only real wait in these tests).
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Errorf("held request: %d", w.Code)
	}
	// The third would be held 2 ms, but its client is gone.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if w.Code != 503 {
		t.Errorf("cancelled while held: %d, want 503", w.Code)
	}
}

func TestFromContext(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 10, time.Second, remote),
		fixed("b", 100, time.Minute, remote),
	})
	var got []string
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		if !ok {
			t.Fatal("FromContext: no result")
		}
		for i := 0; i < res.Len(); i++ {
			got = append(got, res.Policy(i).Name()+"="+res.Key(i))
		}
		if !res.Allowed() || res.Decision(1).Remaining != 99 {
			t.Errorf("result %+v", res.Decision(1))
		}
	}))
	serve(h, "GET", "/")
	if want := []string{"a=a:192.0.2.1:1234", "b=b:192.0.2.1:1234"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if _, ok := middleware.FromContext(context.Background()); ok {
		t.Error("FromContext(Background) found a result")
	}
}

func TestDenyHandler(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, remote)},
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
			w.Header().Set("Retry-After", res.RetryAfter().String())
			w.WriteHeader(418)
		}))
	h := m.Handler(ok)
	serve(h, "GET", "/")
	w := serve(h, "GET", "/")
	if w.Code != 418 || w.Header().Get("Retry-After") != "1m0s" || w.Header().Get("RateLimit") != `"p";r=0;t=60` {
		t.Errorf("deny handler: %d %v", w.Code, w.Header())
	}

	// Every 429 goes to the hook: also a cost no policy can admit, whose
	// *policy.CostError is in res.Err().
	var costErr *policy.CostError
	weighted := fixed("weighted", 3, time.Minute, remote, policy.WithCost(func(*http.Request) int64 { return 4 }))
	m = middleware.MustNew(store, []*policy.Policy{weighted},
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
			errors.As(res.Err(), &costErr)
			w.WriteHeader(418)
		}))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != 418 || costErr == nil || costErr.Cost != 4 || w.Body.Len() != 0 {
		t.Errorf("cost out of range: %d %v body %q, want the hook's 418 with the CostError", w.Code, costErr, w.Body)
	}
}

func TestNestedMiddlewares(t *testing.T) {
	store, _ := newStore(t)
	global := middleware.MustNew(store, []*policy.Policy{fixed("global", 10, time.Minute, remote)})
	strict := middleware.MustNew(store, []*policy.Policy{fixed("strict", 1, time.Minute, remote)})
	var inner *middleware.Result
	h := global.Handler(strict.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner, _ = middleware.FromContext(r.Context())
	})))
	w := serve(h, "GET", "/")
	if got := w.Header().Values("RateLimit"); strings.Join(got, "|") != `"global";r=9;t=60|"strict";r=0;t=60` {
		t.Errorf("nested RateLimit = %q", got)
	}
	if inner == nil || inner.Policy(0).Name() != "strict" {
		t.Errorf("FromContext returns %v, want the innermost", inner)
	}
	w = serve(h, "GET", "/")
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" {
		t.Errorf("inner denial: %d", w.Code)
	}
}

// TestFromContextWithoutDecisions holds FromContext's doc to what a
// handler gets, through chi and ServeMux: a request the middleware let
// through while its store failed (FailOpen, the default) is found with
// ok true and a Result that holds no decisions (Taken false, Allowed
// false, every Decision the zero one, StoreFailed true), and one whose
// every policy was left out for want of a key (policy.SkipPolicy) with ok
// true and no policies (Len 0); ok is false only when no policy matched.
// The doc said only "ok is false when none did (no policy applied, ...)",
// and its example printed each Decision's Remaining unchecked: "0 of 0
// left" for every request while the store was down.
func TestFromContextWithoutDecisions(t *testing.T) {
	store, _ := newStore(t)
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	down := middleware.MustNew(&failing{}, []*policy.Policy{fixed("p", 5, time.Minute, remote)}, quiet)
	keyless := middleware.MustNew(store, []*policy.Policy{fixed("u", 5, time.Minute, user, policy.OnKeyError(policy.SkipPolicy))})
	unmatched := middleware.MustNew(store, []*policy.Policy{fixed("w", 5, time.Minute, remote, policy.WithMethods(http.MethodPost))})
	type seen struct {
		ok, taken, allowed, storeFailed bool
		n                               int
		d                               algorithms.Decision
	}
	var got seen
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		got = seen{ok: ok}
		if ok {
			got = seen{ok, res.Taken(), res.Allowed(), res.StoreFailed(), res.Len(), algorithms.Decision{}}
			if res.Len() > 0 {
				got.d = res.Decision(0)
			}
		}
	})
	for _, c := range []struct {
		name string
		m    *middleware.Middleware
		want seen
	}{
		{"store down, failing open", down, seen{ok: true, storeFailed: true, n: 1}},
		{"every policy without a key", keyless, seen{ok: true, taken: true, allowed: true}},
		{"no policy matched", unmatched, seen{}},
	} {
		cr := chi.NewRouter()
		cr.With(c.m.Handler).Get("/", read)
		mux := http.NewServeMux()
		mux.Handle("GET /", c.m.Handler(read))
		for router, h := range map[string]http.Handler{"chi": cr, "ServeMux": mux} {
			got = seen{}
			if w := serve(h, "GET", "/"); w.Code != 200 {
				t.Fatalf("%s, %s: %d", c.name, router, w.Code)
			}
			if got != c.want {
				t.Errorf("%s, %s: FromContext gave %+v; want %+v", c.name, router, got, c.want)
			}
		}
	}

	f, err := parser.ParseFile(token.NewFileSet(), "middleware.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := ""
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "FromContext" {
			doc = strings.Join(strings.Fields(fd.Doc.Text()), " ")
		}
	}
	for _, want := range []string{"Taken", "StoreFailed", "SkipPolicy", "Len"} {
		if !strings.Contains(doc, want) {
			t.Errorf("FromContext's doc does not mention %s; a handler reading the Result of a request let through while the store failed, or of one whose every policy was left out for want of a key, is not told that it holds no decisions:\n%s", want, doc)
		}
	}
}

func TestRuleTableStdlib(t *testing.T) {
	store, _ := newStore(t)
	login := policy.Must(policy.Login(remote, policy.WithRoutes("POST /login")))
	mux := http.NewServeMux()
	mux.Handle("POST /login", ok)
	mux.Handle("/", ok)
	// Wrapping the whole mux: the pattern is resolved by asking the mux.
	h := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux)
	for i := range 7 {
		w := serve(h, "POST", "/login")
		if want := map[bool]int{true: 200, false: 429}[i < 5]; w.Code != want {
			t.Errorf("POST /login #%d: %d, want %d", i+1, w.Code, want)
		}
	}
	if w := serve(h, "POST", "/other"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Errorf("POST /other: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
}

func TestNewErrors(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 1, time.Second, remote)
	tests := []struct {
		name     string
		store    algorithms.Store
		policies []*policy.Policy
		opts     []middleware.Option
		want     string
	}{
		{"nil store", nil, []*policy.Policy{p}, nil, "store is nil"},
		{"no policies", store, nil, nil, "Policies is empty; give at least one policy"},
		{"duplicate", store, []*policy.Policy{p, p}, nil, `"p": Name`},
		{"nil option", store, []*policy.Policy{p}, []middleware.Option{nil}, "nil Option"},
		{"fallback nil", store, []*policy.Policy{p}, []middleware.Option{middleware.OnStoreError(middleware.FallBack(nil))}, "FallBack"},
		{"closed negative", store, []*policy.Policy{p}, []middleware.Option{middleware.OnStoreError(middleware.FailClosed(-1))}, "FailClosed"},
		{"breaker", store, []*policy.Policy{p}, []middleware.Option{middleware.WithBreaker(-1, 0)}, "WithBreaker"},
		{"breaker cooldown", store, []*policy.Policy{p}, []middleware.Option{middleware.WithBreaker(3, 0)}, "cooldown"},
		{"profile", store, []*policy.Policy{p}, []middleware.Option{middleware.WithHeaders(middleware.Profile(99))}, "WithHeaders"},
		{"pk", store, []*policy.Policy{p}, []middleware.Option{middleware.WithPartitionKey([]byte("short"))}, "WithPartitionKey"},
		{"clock", store, []*policy.Policy{p}, []middleware.Option{middleware.WithClock(nil)}, "WithClock"},
		{"wait", store, []*policy.Policy{p}, []middleware.Option{middleware.WithWait(nil)}, "WithWait"},
		{"error handler", store, []*policy.Policy{p}, []middleware.Option{middleware.WithErrorHandler(nil)}, "WithErrorHandler"},
		{"deny handler", store, []*policy.Policy{p}, []middleware.Option{middleware.WithDenyHandler(nil)}, "WithDenyHandler"},
		{"skip", store, []*policy.Policy{p}, []middleware.Option{middleware.WithSkip(nil)}, "WithSkip"},
		{"pattern", store, []*policy.Policy{p}, []middleware.Option{middleware.WithPatternFunc(nil)}, "WithPatternFunc"},
		{"problem type", store, []*policy.Policy{p}, []middleware.Option{middleware.WithProblemType(`a"b`)}, "WithProblemType"},
		// RFC 9457's type is a URI reference (RFC 3986): no space, no
		// characters a URI must percent-encode.
		{"problem type space", store, []*policy.Policy{p}, []middleware.Option{middleware.WithProblemType("quota exceeded")}, "WithProblemType"},
		{"problem type brace", store, []*policy.Policy{p}, []middleware.Option{middleware.WithProblemType("https://example.com/{type}")}, "WithProblemType"},
	}
	for _, tt := range tests {
		_, err := middleware.New(tt.store, tt.policies, tt.opts...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "middleware: ") {
			t.Errorf("%s: New error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustNew(nil store) did not panic")
		}
	}()
	middleware.MustNew(nil, []*policy.Policy{p})
}

// TestConcurrentNeverOverAdmits sends requests from many goroutines through
// one middleware: exactly the limit is admitted, and downstream handlers
// read their own results.
func TestConcurrentNeverOverAdmits(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("burst", 300, time.Minute, remote),
		fixed("wide", 1000, time.Minute, remote),
	})
	var mu sync.Mutex
	admitted := 0
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		if !ok || !res.Allowed() || res.Len() != 2 {
			t.Error("downstream without an allowed result")
		}
		mu.Lock()
		admitted++
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 60 {
				w := serve(h, "GET", "/")
				if w.Code != 200 && w.Code != 429 {
					t.Errorf("status %d", w.Code)
				}
			}
		}()
	}
	wg.Wait()
	if admitted != 300 || m.Stats().Denied != 180 {
		t.Errorf("admitted %d denied %d of 480, want 300 and 180", admitted, m.Stats().Denied)
	}
}

func TestManyPoliciesHeaders(t *testing.T) {
	store, _ := newStore(t)
	var ps []*policy.Policy
	var want []string
	for i := range 6 {
		name := "p" + string(rune('a'+i))
		ps = append(ps, fixed(name, int64(10+i), time.Minute, remote))
		want = append(want, `"`+name+`";r=`+strconv.Itoa(9+i)+";t=60")
	}
	w := serve(middleware.MustNew(store, ps).Handler(ok), "GET", "/")
	if got := w.Header().Get("RateLimit"); got != strings.Join(want, ", ") {
		t.Errorf("RateLimit = %s\nwant %s", got, strings.Join(want, ", "))
	}
}

func TestHeaderOptions(t *testing.T) {
	store, clock := newStore(t)
	p := []*policy.Policy{fixed("p", 10, time.Minute, remote)}
	w := serve(middleware.MustNew(store, p, middleware.WithPartitionKey([]byte("0123456789abcdef"))).Handler(ok), "GET", "/")
	if got := w.Header().Get("RateLimit"); !regexp.MustCompile(`^"p";r=9;t=60;pk=:[A-Za-z0-9+/]{12}:$`).MatchString(got) {
		t.Errorf("with a partition key: RateLimit %q", got)
	}
	clock.Advance(1500 * time.Millisecond)
	m := middleware.MustNew(store, p, middleware.WithHeaders(middleware.LegacyUnix), middleware.WithClock(clock))
	w = serve(m.Handler(ok), "GET", "/")
	// The minute ends at t0+60s; now is t0+1.5s.
	if got, want := w.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(t0.Unix()+60, 10); got != want || w.Header().Get("RateLimit") != "" {
		t.Errorf("legacy-unix: X-RateLimit-Reset %q, want %q (headers %v)", got, want, w.Header())
	}
	w = serve(middleware.MustNew(store, p, middleware.WithHeaders(middleware.NoHeaders)).Handler(ok), "GET", "/")
	for k := range w.Header() {
		if strings.Contains(strings.ToLower(k), "ratelimit") {
			t.Errorf("NoHeaders sent %s", k)
		}
	}
}

// TestNestedMixedProfiles: an inner middleware does not defer to an outer
// one that wrote no headers (or another profile's).
func TestNestedMixedProfiles(t *testing.T) {
	store, _ := newStore(t)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("outer", 1, time.Minute, remote)}, middleware.WithHeaders(middleware.NoHeaders))
	inner := middleware.MustNew(store, []*policy.Policy{fixed("inner", 10, time.Minute, remote)}, middleware.WithHeaders(middleware.Draft6))
	w := serve(outer.Handler(inner.Handler(ok)), "GET", "/")
	if w.Header().Get("RateLimit-Remaining") != "9" || w.Header().Get("RateLimit-Limit") != "10" {
		t.Errorf("inner draft-6 headers under a header-less outer: %v", w.Header())
	}
}

// TestPolicyNamespaces: two policies with equal Specs and keys keep apart by
// name; one policy used by two middlewares is one allowance.
func TestPolicyNamespaces(t *testing.T) {
	store, _ := newStore(t)
	shared := fixed("shared", 3, time.Minute, remote)
	a := middleware.MustNew(store, []*policy.Policy{shared}).Handler(ok)
	b := middleware.MustNew(store, []*policy.Policy{shared}).Handler(ok)
	other := middleware.MustNew(store, []*policy.Policy{fixed("other", 3, time.Minute, remote)}).Handler(ok)
	for _, tt := range []struct {
		h    http.Handler
		want string
	}{
		{a, `"shared";r=2;t=60`},
		{b, `"shared";r=1;t=60`},
		{other, `"other";r=2;t=60`},
		{a, `"shared";r=0;t=60`},
	} {
		if got := serve(tt.h, "GET", "/").Header().Get("RateLimit"); got != tt.want {
			t.Errorf("RateLimit %s, want %s", got, tt.want)
		}
	}
}

func TestTwoViolatedPolicies(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 1, time.Second, remote),
		fixed("b", 1, time.Minute, remote),
		fixed("c", 5, time.Minute, remote),
	}, middleware.WithProblemType(middleware.ProblemTypeBlank), middleware.WithHeaders(middleware.Draft6))
	h := m.Handler(ok)
	serve(h, "GET", "/")
	w := serve(h, "GET", "/")
	want := `{"type":"about:blank","title":"Too Many Requests","status":429,` +
		`"detail":"Quota exceeded for a, b; retry in 60 seconds.","violated-policies":["a","b"]}` + "\n"
	if w.Code != 429 || w.Body.String() != want || w.Header().Get("Retry-After") != "60" {
		t.Errorf("%d Retry-After %q body\n%s\nwant\n%s", w.Code, w.Header().Get("Retry-After"), w.Body, want)
	}
	// Draft-6 reports a violated policy: of a and b (both 0 left), b's
	// wait is the longer.
	if got := w.Header().Get("RateLimit-Limit") + "/" + w.Header().Get("RateLimit-Reset"); got != "1/60" {
		t.Errorf("draft-6 limit/reset %s, want 1/60", got)
	}
}

// allocsPerRequest returns the allocations of a GET / through h (a new
// recorder each time), averaged over 200 requests.
func allocsPerRequest(h http.Handler) float64 {
	r := httptest.NewRequest("GET", "/", nil)
	return testing.AllocsPerRun(200, func() { h.ServeHTTP(httptest.NewRecorder(), r) })
}

// TestAllocations guards the allocation budget: one allocation per request
// beyond the handler's own, for one policy and for four stacked ones.
func TestAllocations(t *testing.T) {
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	for _, n := range []int{1, 4} {
		var ps []*policy.Policy
		for i := range n {
			ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, ip)))
		}
		h := middleware.MustNew(store, ps).Handler(ok)
		h.ServeHTTP(httptest.NewRecorder(), r) // the store's first sight of the key allocates
		if got := allocsPerRequest(h); got > bare+1 {
			t.Errorf("%d policies: %v allocations per request, want at most %v (bare handler + 1)", n, got, bare+1)
		}
	}
}

// TestLongHeaderValues checks the values that outgrow the per-request
// buffer (a long policy name, a one-policy Draft7 dictionary, four stacked
// policies): they are built whole, for several requests in a row.
func TestLongHeaderValues(t *testing.T) {
	long := strings.Repeat("a-long-policy-name-", 3) + "x" // 58 bytes; at most 64
	tests := []struct {
		name     string
		policies []*policy.Policy
		opts     []middleware.Option
		header   string
		want     func(n int) string
	}{
		{"long name", []*policy.Policy{fixed(long, 1000, time.Minute, remote)}, nil, "RateLimit",
			func(n int) string { return `"` + long + `";r=` + strconv.Itoa(1000-n) + ";t=60" }},
		{"draft-7", []*policy.Policy{fixed("p", 1_000_000_000, time.Minute, remote)}, []middleware.Option{middleware.WithHeaders(middleware.Draft7)}, "RateLimit",
			func(n int) string {
				return "limit=1000000000, remaining=" + strconv.Itoa(1_000_000_000-n) + ", reset=60"
			}},
		{"four", []*policy.Policy{
			fixed("first", 1000, time.Minute, remote), fixed("second", 1000, time.Minute, remote),
			fixed("third", 1000, time.Minute, remote), fixed("fourth", 1000, time.Minute, remote),
		}, nil, "RateLimit", func(n int) string {
			r := strconv.Itoa(1000 - n)
			return `"first";r=` + r + `;t=60, "second";r=` + r + `;t=60, "third";r=` + r + `;t=60, "fourth";r=` + r + ";t=60"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _ := newStore(t)
			h := middleware.MustNew(store, tt.policies, tt.opts...).Handler(ok)
			var ws []*httptest.ResponseRecorder
			for range 3 {
				ws = append(ws, serve(h, "GET", "/"))
			}
			for i, w := range ws { // the earlier responses' values are intact
				if got, want := w.Header().Get(tt.header), tt.want(i+1); got != want {
					t.Errorf("request %d: %s = %q, want %q", i+1, tt.header, got, want)
				}
			}
		})
	}
}

// TestWithoutContext checks the middleware without context: downstream
// sees the request as it came and no decision, every response carries its
// own header values (the recycled Result does not leak into earlier
// responses), and denial works as usual.
func TestWithoutContext(t *testing.T) {
	store, _ := newStore(t)
	var seen []*http.Request
	down := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := middleware.FromContext(r.Context()); ok {
			t.Error("FromContext found a decision")
		}
		seen = append(seen, r)
	})
	h := middleware.MustNew(store, []*policy.Policy{
		fixed("per-minute", 3, time.Minute, remote), fixed("per-hour", 10, time.Hour, remote),
	}, middleware.WithoutContext()).Handler(down)
	var ws []*httptest.ResponseRecorder
	var rs []*http.Request
	for range 4 {
		r := httptest.NewRequest("GET", "/", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		ws, rs = append(ws, w), append(rs, r)
	}
	for i, w := range ws {
		want := `"per-minute";r=` + strconv.Itoa(2-i) + `;t=60, "per-hour";r=` + strconv.Itoa(9-i) + ";t=2760"
		code := http.StatusOK
		if i == 3 {
			want, code = `"per-minute";r=0;t=60, "per-hour";r=7;t=2760`, http.StatusTooManyRequests
		}
		if w.Code != code || w.Header().Get("RateLimit") != want {
			t.Errorf("request %d: %d RateLimit %q, want %d %q", i+1, w.Code, w.Header().Get("RateLimit"), code, want)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("%d requests passed on, want 3", len(seen))
	}
	for i, r := range seen {
		if r != rs[i] {
			t.Errorf("request %d was passed on as a copy, want the request itself", i+1)
		}
	}
}

// TestWithoutContextConcurrent runs many clients at once through a
// middleware without context (run it with -race): each response reports
// its own client's count.
func TestWithoutContextConcurrent(t *testing.T) {
	store, _ := newStore(t)
	h := middleware.MustNew(store, []*policy.Policy{fixed("p", 1000, time.Minute, remote)},
		middleware.WithoutContext()).Handler(ok)
	const clients, requests = 8, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = "192.0.2." + strconv.Itoa(c) + ":1"
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if got, want := w.Header().Get("RateLimit"), `"p";r=`+strconv.Itoa(999-i)+";t=60"; got != want {
					t.Errorf("client %d request %d: RateLimit %q, want %q", c, i+1, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRouteGETCoversHEAD: a ServeMux "GET" pattern serves HEAD requests
// too, so a policy on "GET /items/{id}" limits them as well (they were a
// way around it).
func TestRouteGETCoversHEAD(t *testing.T) {
	store, _ := newStore(t)
	reads := fixed("reads", 2, time.Minute, remote, policy.WithRoutes("GET /items/{id}"))
	mux := http.NewServeMux()
	m := middleware.MustNew(store, []*policy.Policy{reads})
	mux.Handle("GET /items/{id}", m.Handler(ok))
	mux.Handle("POST /items/{id}", m.Handler(ok))
	var codes []int
	for _, method := range []string{"HEAD", "GET", "HEAD", "POST"} {
		w := serve(mux, method, "/items/1")
		codes = append(codes, w.Code)
	}
	if want := []int{200, 200, 429, 200}; !slices.Equal(codes, want) {
		t.Errorf("HEAD, GET, HEAD, POST /items/1 under 2 GETs a minute: %v, want %v", codes, want)
	}

	// The same for a policy restricted by method.
	h := middleware.MustNew(store, []*policy.Policy{fixed("gets", 1, time.Minute, remote, policy.WithMethods("GET"))}).Handler(ok)
	codes = nil
	for _, method := range []string{"HEAD", "GET", "POST"} {
		codes = append(codes, serve(h, method, "/").Code)
	}
	if want := []int{200, 429, 200}; !slices.Equal(codes, want) {
		t.Errorf("HEAD, GET, POST under 1 GET a minute: %v, want %v", codes, want)
	}
}

// counting is a store that counts its calls and the checks in each.
type counting struct {
	algorithms.Store
	mu     sync.Mutex
	checks []int
}

func (c *counting) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	c.mu.Lock()
	c.checks = append(c.checks, len(checks))
	c.mu.Unlock()
	return c.Store.Take(ctx, checks...)
}

// TestStackedOneStoreCall: four stacked policies are one store call per
// request, allowed or denied, and a denial by one consumes nothing of the
// others.
func TestStackedOneStoreCall(t *testing.T) {
	store, _ := newStore(t)
	c := &counting{Store: store}
	h := middleware.MustNew(c, []*policy.Policy{
		fixed("s", 10, time.Second, remote),
		fixed("m", 2, time.Minute, remote),
		fixed("h", 100, time.Hour, remote),
		fixed("d", 1000, 24*time.Hour, remote),
	}).Handler(ok)
	var codes []int
	for range 4 {
		codes = append(codes, serve(h, "GET", "/").Code)
	}
	if want := []int{200, 200, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	if want := []int{4, 4, 4, 4}; !slices.Equal(c.checks, want) {
		t.Errorf("store calls (checks in each) %v, want %v", c.checks, want)
	}
	// Windows are aligned to the epoch: t0 is 840 s into its hour and
	// 80,040 s into its day.
	if got, want := serve(h, "GET", "/").Header().Get("RateLimit"), `"s";r=8;t=1, "m";r=0;t=60, "h";r=98;t=2760, "d";r=998;t=6360`; got != want {
		t.Errorf("after two denials RateLimit %q, want %q", got, want)
	}
}

// TestServeMuxPatternNested: a rule table wrapping a sub-mux mounted in an
// outer ServeMux asks the sub-mux for the route; the outer mux's pattern
// ("/api/", still in r.Pattern after StripPrefix) is not the route, and
// taking it let every request through unlimited.
func TestServeMuxPatternNested(t *testing.T) {
	store, _ := newStore(t)
	inner := http.NewServeMux()
	inner.Handle("POST /login", ok)
	inner.Handle("GET /", ok)
	login := policy.Must(policy.Login(remote, policy.WithRoutes("POST /login")))
	m := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(inner)))
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", m.Handler(inner)))
	var codes []int
	for range 6 {
		codes = append(codes, serve(outer, "POST", "/api/login").Code)
	}
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("POST /api/login x6: %v, want %v", codes, want)
	}
	if w := serve(outer, "GET", "/api/other"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Errorf("GET /api/other: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
}

// TestShadowNeverHoldsNorFailsClosed: in shadow mode a leaky_queue policy
// holds no request (and one beyond MaxDelay passes), and a failing store
// under FailClosed lets requests through; each would-be rejection is
// reported.
func TestShadowNeverHoldsNorFailsClosed(t *testing.T) {
	store, _ := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Second}, remote))
	waits, reports := 0, 0
	report := middleware.WithShadow(func(*http.Request, *middleware.Result) { reports++ })
	h := middleware.MustNew(store, []*policy.Policy{queue}, report, middleware.WithWait(func(context.Context, time.Duration) error {
		waits++
		return nil
	})).Handler(ok)
	var codes []int
	for range 4 {
		codes = append(codes, serve(h, "GET", "/").Code)
	}
	if want := []int{200, 200, 200, 200}; !slices.Equal(codes, want) || waits != 0 || reports != 2 {
		t.Errorf("shadow queue: codes %v, %d waits, %d reports; want %v, 0 waits, 2 reports (beyond MaxDelay)", codes, waits, reports, want)
	}
	reports = 0
	h = middleware.MustNew(&failing{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, report,
		middleware.OnStoreError(middleware.FailClosed(time.Second))).Handler(ok)
	if w := serve(h, "GET", "/"); w.Code != 200 || w.Body.String() != "ok" || reports != 1 {
		t.Errorf("shadow fail closed: %d %q, %d reports; want 200 ok, 1 report", w.Code, w.Body, reports)
	}
}

// TestRouteHEADRuleOfItsOwn: in a rule table with "GET /items/{id}" at 1 a
// minute and "HEAD /items/{id}" at 3, HEAD requests are under the HEAD
// rule only (the GET rule took them too: the first HEAD used up the GET
// allowance and the second was denied).
func TestRouteHEADRuleOfItsOwn(t *testing.T) {
	store, _ := newStore(t)
	gets := fixed("gets", 1, time.Minute, remote, policy.WithRoutes("GET /items/{id}"))
	heads := fixed("heads", 3, time.Minute, remote, policy.WithRoutes("HEAD /items/{id}"))
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", ok)
	h := middleware.MustNew(store, []*policy.Policy{gets, heads}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux)
	var codes []int
	var limits []string
	for _, method := range []string{"HEAD", "HEAD", "GET", "HEAD", "HEAD", "GET"} {
		w := serve(h, method, "/items/1")
		codes = append(codes, w.Code)
		limits = append(limits, w.Header().Get("RateLimit-Policy"))
	}
	if want := []int{200, 200, 200, 200, 429, 429}; !slices.Equal(codes, want) {
		t.Errorf("HEAD, HEAD, GET, HEAD, HEAD, GET: %v, want %v", codes, want)
	}
	if want := `"heads";q=3;w=60`; limits[0] != want {
		t.Errorf("HEAD's RateLimit-Policy %q, want %q", limits[0], want)
	}
}

// TestDeniedResetIsRetryAfter: drafts -06/-07 ask that a 429's reset name
// the instant of its Retry-After. Two policies deny with different
// Remaining: "minute" (1 a minute) at 0, "hour" (3 an hour, each request
// costing 2) at 1. The single-valued profiles report the lowest remaining
// ("minute"), but its reset (59 s) was not the Retry-After (3599 s, the
// hour's wait): a client that trusted the reset came back to another 429.
func TestDeniedResetIsRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		reset   func(http.Header) string
	}{
		{middleware.Draft6, func(h http.Header) string { return h.Get("RateLimit-Reset") }},
		{middleware.Draft7, func(h http.Header) string {
			v := h.Get("RateLimit")
			return v[strings.LastIndex(v, "reset=")+len("reset="):]
		}},
		{middleware.Legacy, func(h http.Header) string { return h.Get("X-RateLimit-Reset") }},
		{middleware.LegacyUnix, func(h http.Header) string {
			u, _ := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
			return strconv.FormatInt(u-t0.Add(time.Second).Unix(), 10)
		}},
	} {
		store, clock := newStore(t)
		minute := fixed("minute", 1, time.Minute, remote)
		hour := fixed("hour", 3, time.Hour, remote, policy.WithCost(func(*http.Request) int64 { return 2 }))
		h := middleware.MustNew(store, []*policy.Policy{minute, hour}, middleware.WithHeaders(tt.profile), middleware.WithClock(clock)).Handler(ok)
		if w := serve(h, "GET", "/"); w.Code != 200 {
			t.Fatalf("%s: first request %d", tt.profile, w.Code)
		}
		clock.Advance(time.Second)
		w := serve(h, "GET", "/")
		if w.Code != 429 {
			t.Fatalf("%s: second request %d", tt.profile, w.Code)
		}
		if got, want := tt.reset(w.Header()), w.Header().Get("Retry-After"); got != want {
			t.Errorf("%s: reset %s, Retry-After %s: %v", tt.profile, got, want, w.Header())
		}
	}
}

// TestNestedShadowDeniedReset: an outer middleware in shadow mode denies
// (1 a minute) but lets the request through; the inner one (1 an hour)
// denies it for real. The 429's single-valued headers are the inner
// denial's, whose reset is the Retry-After; the outer's shadow denial was
// kept (same remaining), so the reset named the minute (59) while
// Retry-After named the hour.
func TestNestedShadowDeniedReset(t *testing.T) {
	store, clock := newStore(t)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, remote)},
		middleware.WithHeaders(middleware.Draft6), middleware.WithClock(clock), middleware.WithShadow(nil))
	inner := middleware.MustNew(store, []*policy.Policy{fixed("hour", 1, time.Hour, remote)},
		middleware.WithHeaders(middleware.Draft6), middleware.WithClock(clock))
	h := outer.Handler(inner.Handler(ok))
	serve(h, "GET", "/")
	clock.Advance(time.Second)
	w := serve(h, "GET", "/")
	if w.Code != 429 {
		t.Fatalf("second request %d", w.Code)
	}
	if got, want := w.Header().Get("RateLimit-Reset"), w.Header().Get("Retry-After"); got != want || w.Header().Get("RateLimit-Limit") != "1" {
		t.Errorf("RateLimit-Reset %s, Retry-After %s: %v", got, want, w.Header())
	}
}

// TestHooksSeeTheirDecision: the deny handler and the shadow report are
// handlers of the request the middleware evaluated: FromContext there
// returns the Result they are given (the innermost middleware's), not the
// decision of a middleware further out, which had allowed the request.
// They were passed the request as it came in, without the middleware's
// context.
func TestHooksSeeTheirDecision(t *testing.T) {
	store, _ := newStore(t)
	global := middleware.MustNew(store, []*policy.Policy{fixed("global", 10, time.Minute, remote)})
	check := func(name string, r *http.Request, res *middleware.Result) {
		t.Helper()
		got, ok := middleware.FromContext(r.Context())
		if !ok || got != res {
			found := "none"
			if ok {
				found = got.Policy(0).Name()
			}
			t.Errorf("%s: FromContext found the Result of %s, want the one the hook was given (%s)", name, found, res.Policy(0).Name())
		}
	}
	var calls int
	deny := middleware.MustNew(store, []*policy.Policy{fixed("deny", 1, time.Minute, remote)},
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
			calls++
			check("deny handler", r, res)
			w.WriteHeader(429)
		}))
	shadow := middleware.MustNew(store, []*policy.Policy{fixed("shadow", 1, time.Minute, remote)},
		middleware.WithShadow(func(r *http.Request, res *middleware.Result) {
			calls++
			check("shadow report", r, res)
		}))
	for _, m := range []*middleware.Middleware{deny, shadow} {
		h := global.Handler(m.Handler(ok))
		serve(h, "GET", "/")
		serve(h, "GET", "/")
	}
	if calls != 2 {
		t.Errorf("%d hook calls, want 2", calls)
	}
}
