package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// remaining returns the r of the named policy in the IETF RateLimit header.
func remaining(t *testing.T, w *httptest.ResponseRecorder, name string) int64 {
	t.Helper()
	for _, m := range strings.Split(w.Header().Get("RateLimit"), ", ") {
		if strings.HasPrefix(m, `"`+name+`";r=`) {
			v := strings.TrimPrefix(m, `"`+name+`";r=`)
			v, _, _ = strings.Cut(v, ";")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("RateLimit %q: %v", w.Header().Get("RateLimit"), err)
			}
			return n
		}
	}
	t.Fatalf("RateLimit %q has no member %q", w.Header().Get("RateLimit"), name)
	return 0
}

func TestSetPoliciesKeepsUnchangedCounters(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("same", 10, time.Minute, remote),
		fixed("changed", 10, time.Minute, remote),
		fixed("dropped", 10, time.Minute, remote),
	})
	h := m.Handler(ok)
	for range 3 {
		serve(h, "GET", "/")
	}
	// New Policy values, as a reload builds them: same name and Spec for
	// "same", a higher limit for "changed" (new counters, guarded by the
	// replaced Spec's for a while), "dropped" gone, "added" new.
	if err := m.SetPolicies([]*policy.Policy{
		fixed("same", 10, time.Minute, remote),
		fixed("changed", 20, time.Minute, remote),
		fixed("added", 5, time.Minute, remote),
	}); err != nil {
		t.Fatal(err)
	}
	w := serve(h, "GET", "/")
	if got, want := remaining(t, w, "same"), int64(10-4); got != want {
		t.Errorf("same: r = %d, want %d (counters kept)", got, want)
	}
	if got, want := remaining(t, w, "changed"), int64(20-4); got != want {
		t.Errorf("changed: r = %d, want %d (raised: the replaced Spec's counters, judged at 20)", got, want)
	}
	if got, want := remaining(t, w, "added"), int64(5-1); got != want {
		t.Errorf("added: r = %d, want %d", got, want)
	}
	if strings.Contains(w.Header().Get("RateLimit"), "dropped") {
		t.Errorf("RateLimit %q still has the dropped policy", w.Header().Get("RateLimit"))
	}
	if got := m.Set().Len(); got != 3 {
		t.Errorf("Set().Len() = %d, want 3", got)
	}
}

func TestSetPoliciesErrorKeepsRunningSet(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("a", 2, time.Minute, remote)})
	before := m.Set()
	for _, bad := range [][]*policy.Policy{
		nil,
		{fixed("x", 1, time.Minute, remote), fixed("x", 2, time.Minute, remote)},
		{nil},
	} {
		if err := m.SetPolicies(bad); err == nil || !strings.HasPrefix(err.Error(), "middleware: ") {
			t.Errorf("SetPolicies(%v) = %v, want a middleware error", bad, err)
		}
	}
	if m.Set() != before {
		t.Error("a failed SetPolicies replaced the running set")
	}
	h := m.Handler(ok)
	serve(h, "GET", "/")
	serve(h, "GET", "/")
	if w := serve(h, "GET", "/"); w.Code != http.StatusTooManyRequests {
		t.Errorf("third request: %d, want 429 under the old policy", w.Code)
	}
}

func TestSetLimit(t *testing.T) {
	store, _ := newStore(t)
	rec := &recorder{}
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 10, time.Minute, remote),
		policy.Must(policy.New("b", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 20}, remote)),
	}, middleware.WithObserver(rec))
	if got, want := rec.limitsString(), "a=10/10 b=10/10"; got != want {
		t.Errorf("limits at construction: %s, want %s", got, want)
	}
	h := m.Handler(ok)
	serve(h, "GET", "/")
	if err := m.SetLimit("a", 8); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLimit("b", 5); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.limitsString(), "a=10/10 b=10/10 a=8/10 b=5/10"; got != want {
		t.Errorf("limits: %s, want %s", got, want)
	}
	w := serve(h, "GET", "/")
	if got, want := w.Header().Get("RateLimit-Policy"), `"a";q=8;w=60, "b";q=10;w=1`; got != want {
		t.Errorf("RateLimit-Policy = %s, want %s (b's burst scaled 20 -> 10)", got, want)
	}
	// A new Spec's counters restart at the new level (7 left of 8), but
	// the configured Spec's, which counted the request before, are
	// judged at 8 (policy.Policy.GuardLimit): 8 less those two.
	if got, want := remaining(t, w, "a"), int64(6); got != want {
		t.Errorf("a at limit 8: r = %d, want %d", got, want)
	}
	if c := m.Configured("a"); c == nil || c.Spec().Limit != 10 {
		t.Errorf("Configured(a) = %v, want the limit-10 policy", c)
	}
	// Back to the configured limit: the counters of that Spec are found
	// again, and they counted the request decided at limit 8 too (its
	// guard: policy.Policy.Guard).
	if err := m.SetLimit("a", 0); err != nil {
		t.Fatal(err)
	}
	if got, want := remaining(t, serve(h, "GET", "/"), "a"), int64(10-3); got != want {
		t.Errorf("a back at 10: r = %d, want %d", got, want)
	}
	// SetLimit survives a reload that leaves the Spec alone as it is, and one
	// that changes it in proportion.
	if err := m.SetLimit("b", 5); err != nil {
		t.Fatal(err)
	}
	m.SetPolicies([]*policy.Policy{fixed("a", 11, time.Minute, remote), m.Configured("b")})
	if got := m.Set().Policies()[1].Spec().Limit; got != 5 {
		t.Errorf("b after a reload keeping its Spec: limit %d, want 5", got)
	}
	m.SetLimit("a", 6) // configured 11
	m.SetPolicies([]*policy.Policy{fixed("a", 12, time.Minute, remote), m.Configured("b")})
	if got := m.Set().Policies()[0].Spec().Limit; got != 6 {
		t.Errorf("a at 6 of 11, reloaded at 12: limit %d, want 6 (floor(6*12/11), in the same swap)", got)
	}
	m.SetPolicies([]*policy.Policy{fixed("a", 24, time.Minute, remote), m.Configured("b")})
	if got := m.Set().Policies()[0].Spec().Limit; got != 12 {
		t.Errorf("a at 6 of 12, reloaded at 24: limit %d, want 12", got)
	}
	// Never below 1; and the observer hears of both limits.
	n := len(strings.Fields(rec.limitsString()))
	m.SetPolicies([]*policy.Policy{fixed("a", 1, time.Minute, remote), m.Configured("b")})
	if got := strings.Fields(rec.limitsString()); len(got) != n+1 || got[n] != "a=1/1" {
		t.Errorf("limits after configuring 1 at half: %v, want a=1/1 added", got[n:])
	}
	// Configured to what is enforced, then restored: the configured one.
	m.SetPolicies([]*policy.Policy{fixed("a", 12, time.Minute, remote), m.Configured("b")})
	if got := m.Set().Policies()[0].Spec().Limit; got != 12 {
		t.Errorf("a reloaded at 12 with no override left: limit %d, want 12", got)
	}
	for _, tc := range []struct {
		name  string
		limit int64
	}{{"nope", 3}, {"a", -1}} {
		if err := m.SetLimit(tc.name, tc.limit); err == nil {
			t.Errorf("SetLimit(%q, %d) = nil, want an error", tc.name, tc.limit)
		}
	}
}

// TestSwapUnderTraffic swaps the rule set in a loop while requests are in
// flight: every response must carry the headers of exactly one set, and
// the Result downstream must agree with them. Run it with -race.
func TestSwapUnderTraffic(t *testing.T) {
	store, _ := newStore(t)
	setA := []*policy.Policy{fixed("a1", 1_000_000, time.Minute, remote)}
	setB := []*policy.Policy{fixed("b1", 1_000_000, time.Minute, remote), fixed("b2", 1_000_000, time.Hour, remote)}
	m := middleware.MustNew(store, setA)
	setRE := regexp.MustCompile(`^"a1";q=(\d+);w=60$|^"b1";q=(\d+);w=60, "b2";q=1000000;w=3600$`)
	// policies returns how many policies the header names, 0 for a mix.
	policies := func(header string) int {
		switch m := setRE.FindStringSubmatch(header); {
		case m == nil:
			return 0
		case m[1] != "":
			return 1
		}
		return 2
	}
	var bad atomic.Int64
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		if !ok || policies(w.Header().Get("RateLimit-Policy")) != res.Len() ||
			!strings.HasPrefix(w.Header().Get("RateLimit-Policy"), res.Policy(0).String()) {
			bad.Add(1)
		}
	}))
	const workers, requests, swaps = 4, 300, 300
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "192.0.2." + strconv.Itoa(g) + ":1"
			for range requests {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if policies(w.Header().Get("RateLimit-Policy")) == 0 || w.Code != 200 {
					errs <- w.Header().Get("RateLimit-Policy")
					return
				}
			}
		}()
	}
	for i := range swaps {
		s := setA
		if i%2 == 0 {
			s = setB
		}
		if err := m.SetPolicies(s); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			m.SetLimit(s[0].Name(), int64(500_000+i))
			m.SetLimit(s[0].Name(), 0)
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a response carried RateLimit-Policy %q, a mix or no set", e)
	}
	if n := bad.Load(); n > 0 {
		t.Errorf("%d requests saw a Result disagreeing with their headers", n)
	}
}

// recorder is an Observer that records what it sees.
type recorder struct {
	mu       sync.Mutex
	outcomes []string
	states   []string
	limits   []string
	latency  time.Duration
}

func (rc *recorder) ObserveRequest(e middleware.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	s := e.Outcome.String()
	for i := 0; i < e.Result.Len(); i++ {
		if e.DeniedBy(i) {
			s += ":" + e.Result.Policy(i).Name()
		}
	}
	if e.Result.Fallback() {
		s += "(fallback)"
	}
	rc.outcomes = append(rc.outcomes, s)
	rc.latency += e.Latency
}

func (rc *recorder) ObserveState(from, to middleware.State) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.states = append(rc.states, from.String()+">"+to.String())
}

func (rc *recorder) ObserveLimit(name string, limit, configured int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.limits = append(rc.limits, name+"="+strconv.FormatInt(limit, 10)+"/"+strconv.FormatInt(configured, 10))
}

func (rc *recorder) ObservePolicyRemoved(name string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.limits = append(rc.limits, "-"+name)
}

func (rc *recorder) limitsString() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return strings.Join(rc.limits, " ")
}

// switchable fails while down is set, and otherwise asks the store.
type switchable struct {
	algorithms.Store
	down atomic.Bool
}

func (s *switchable) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.down.Load() {
		return nil, errDown
	}
	return s.Store.Take(ctx, checks...)
}

// tickClock advances by step at every reading.
type tickClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestObserver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failure middleware.Failure
		shadow  bool
		want    string
		states  string
	}{
		{"open", middleware.FailOpen(), false,
			"allowed allowed denied:per-ip key_rejected failed_open failed_open denied:per-ip", "healthy>open open>healthy"},
		{"closed", middleware.FailClosed(time.Second), false,
			"allowed allowed denied:per-ip key_rejected failed_closed failed_closed denied:per-ip", "healthy>closed closed>healthy"},
		{"fallback", middleware.FallBack(nil), false,
			"allowed allowed denied:per-ip key_rejected allowed(fallback) denied:per-ip(fallback) denied:per-ip", "healthy>fallback fallback>healthy"},
		{"shadow", middleware.FailClosed(time.Second), true,
			"allowed allowed shadow_denied:per-ip shadow_denied shadow_denied shadow_denied shadow_denied:per-ip", "healthy>closed closed>healthy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := newStore(t)
			store := &switchable{Store: mem}
			if tc.name == "fallback" {
				fb, _ := newStore(t)
				// The fallback store has seen this client twice already.
				fb.Take(context.Background(), algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, Key: "per-ip:192.0.2.1:1234", Cost: 1})
				tc.failure = middleware.FallBack(fb)
			}
			rec := &recorder{}
			opts := []middleware.Option{middleware.WithObserver(rec), middleware.OnStoreError(tc.failure),
				middleware.WithBreaker(0, 0), middleware.WithClock(&tickClock{now: t0, step: time.Millisecond})}
			if tc.shadow {
				opts = append(opts, middleware.WithShadow(nil))
			}
			m := middleware.MustNew(store, []*policy.Policy{
				fixed("per-ip", 2, time.Minute, remote),
				fixed("per-user", 100, time.Minute, user, policy.WithRoutes("/u")),
			}, opts...)
			h := m.Handler(ok)
			serve(h, "GET", "/")
			serve(h, "GET", "/")
			serve(h, "GET", "/")
			mux := http.NewServeMux()
			mux.Handle("/u", h)
			serve(mux, "GET", "/u") // no X-User
			store.down.Store(true)
			if m.State() != middleware.StateHealthy {
				t.Errorf("State() = %v before a failure", m.State())
			}
			serve(h, "GET", "/")
			serve(h, "GET", "/")
			if got := m.State().String(); got != strings.TrimPrefix(tc.states[:strings.Index(tc.states, " ")], "healthy>") {
				t.Errorf("State() while down = %s", got)
			}
			store.down.Store(false)
			serve(h, "GET", "/") // the primary store again: its count is still 2
			rec.mu.Lock()
			defer rec.mu.Unlock()
			got := strings.Join(rec.outcomes, " ")
			if got != tc.want {
				t.Errorf("outcomes\n got %s\nwant %s", got, tc.want)
			}
			if got := strings.Join(rec.states, " "); got != tc.states {
				t.Errorf("states = %s, want %s", got, tc.states)
			}
			if want := time.Duration(len(rec.outcomes)) * time.Millisecond; rec.latency != want {
				t.Errorf("total latency %v, want %v (one clock tick per decision)", rec.latency, want)
			}
		})
	}
}

func TestWithObserverNil(t *testing.T) {
	store, _ := newStore(t)
	if _, err := middleware.New(store, []*policy.Policy{fixed("a", 1, time.Second, remote)}, middleware.WithObserver(nil)); err == nil {
		t.Error("WithObserver(nil) accepted")
	}
}

// nopObserver observes nothing, cheaply.
type nopObserver struct{ n atomic.Int64 }

func (o *nopObserver) ObserveRequest(e middleware.Event)           { o.n.Add(1) }
func (o *nopObserver) ObserveState(from, to middleware.State)      {}
func (o *nopObserver) ObserveLimit(name string, limit, conf int64) {}

// TestAllocationsObserved: an observer costs no allocation per request.
func TestAllocationsObserved(t *testing.T) {
	store, _ := newStore(t)
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	obs := &nopObserver{}
	h := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("p", 1_000_000, remote))}, middleware.WithObserver(obs)).Handler(ok)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got := allocsPerRequest(h); got > bare+1 {
		t.Errorf("with an observer: %v allocations per request, want at most %v", got, bare+1)
	}
	if obs.n.Load() < 200 {
		t.Errorf("observer saw %d requests, want at least 200", obs.n.Load())
	}
}

// TestRemovedPoliciesReported: a replaced rule set tells a RemovalObserver
// of every policy it dropped (after the new and changed ones), also
// through several observers, and an Observer without the method is told
// nothing and does not break.
func TestRemovedPoliciesReported(t *testing.T) {
	store, _ := newStore(t)
	rec, rec2 := &recorder{}, &recorder{}
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 10, time.Minute, remote), fixed("b", 10, time.Minute, remote), fixed("c", 10, time.Minute, remote),
	}, middleware.WithObserver(rec), middleware.WithObserver(&nopObserver{}), middleware.WithObserver(rec2))
	if err := m.SetPolicies([]*policy.Policy{fixed("b", 10, time.Minute, remote), fixed("d", 4, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	want := "a=10/10 b=10/10 c=10/10 d=4/4 -a -c"
	for i, r := range []*recorder{rec, rec2} {
		if got := r.limitsString(); got != want {
			t.Errorf("observer %d heard %q, want %q", i, got, want)
		}
	}
	// A single observer, the common case, is called directly.
	solo := &recorder{}
	m = middleware.MustNew(store, []*policy.Policy{fixed("a", 10, time.Minute, remote)}, middleware.WithObserver(solo))
	if err := m.SetPolicies([]*policy.Policy{fixed("e", 1, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if got, want := solo.limitsString(), "a=10/10 e=1/1 -a"; got != want {
		t.Errorf("single observer heard %q, want %q", got, want)
	}
}

// TestSetPoliciesCarriedLimitOutOfRange: an effective limit raised above
// the configured one, carried over in proportion to a changed Spec, may
// exceed what the new Spec allows (algorithms.MaxLimit); the reload of a
// valid configuration still succeeds, the policy entering at its new
// configured limit, as a changed Spec's did before the carry-over.
func TestSetPoliciesCarriedLimitOutOfRange(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key := func(*http.Request) (string, error) { return "k", nil }
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("api", spec, key))})
	if err := m.SetLimit("api", 1000); err != nil { // raised by an operator
		t.Fatal(err)
	}
	spec.Limit = algorithms.MaxLimit / 2 // 10x of it is beyond MaxLimit
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("api", spec, key))}); err != nil {
		t.Fatalf("SetPolicies of a valid policy: %v", err)
	}
	if got := m.Set().Policies()[0].Spec().Limit; got != spec.Limit {
		t.Errorf("effective limit %d, want the new configured %d", got, spec.Limit)
	}
}
