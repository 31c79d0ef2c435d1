package adaptive_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

var t0 = time.Unix(1_700_000_040, 0)

var ip = keyfunc.Must(keyfunc.IP())

func newMiddleware(t *testing.T, limits ...int64) *middleware.Middleware {
	t.Helper()
	return newKindMiddleware(t, algorithms.SlidingWindow, limits...)
}

// newKindMiddleware is newMiddleware with policies of kind, limits per
// minute, per ip, on a memory store.
func newKindMiddleware(t *testing.T, kind algorithms.Kind, limits ...int64) *middleware.Middleware {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	var ps []*policy.Policy
	for i, l := range limits {
		spec := algorithms.Spec{Algorithm: kind, Limit: l, Window: time.Minute}
		ps = append(ps, policy.Must(policy.New(fmt.Sprintf("p%d", i), spec, ip)))
	}
	return middleware.MustNew(store, ps)
}

// clockedMiddleware returns a middleware of policies on a memory store,
// both on clock, with opts after WithClock; the store is closed when the
// test ends.
func clockedMiddleware(t *testing.T, clock *algotest.Clock, policies []*policy.Policy, opts ...middleware.Option) *middleware.Middleware {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return middleware.MustNew(store, policies, append([]middleware.Option{middleware.WithClock(clock)}, opts...)...)
}

func limitsOf(m *middleware.Middleware) string {
	var s []string
	for _, p := range m.Set().Policies() {
		s = append(s, fmt.Sprint(p.Spec().Limit))
	}
	return strings.Join(s, ",")
}

// observe feeds c n requests taking latency, the first errs of them 503.
func observe(c *adaptive.Controller, n, errs int, latency time.Duration) {
	for i := range n {
		status := 200
		if i < errs {
			status = 503
		}
		c.Observe(latency, status)
	}
}

// period feeds one period of n requests taking latency, errs of them 5xx,
// then moves the clock past the period's end and evaluates it.
func period(t *testing.T, c *adaptive.Controller, clock *algotest.Clock, n, errs int, latency time.Duration) {
	t.Helper()
	observe(c, n, errs, latency)
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
}

func TestControllerSeed001(t *testing.T) {
	m := newMiddleware(t, 100, 1000)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name        string
		n, errs     int
		latency     time.Duration
		want        string
		wantLevelPm int
	}{
		{"baseline learned", 200, 0, 10 * time.Millisecond, "100,1000", 1000},
		{"slow and failing: 80%", 200, 3, 25 * time.Millisecond, "80,800", 800},
		{"again: 80% of 80%", 200, 3, 25 * time.Millisecond, "64,640", 640},
		{"slow only: hold", 200, 0, 25 * time.Millisecond, "64,640", 640},
		{"failing only: hold", 200, 50, 10 * time.Millisecond, "64,640", 640},
		{"errors exactly 1%: not above, healthy: +10%", 200, 2, 0, "74,740", 740},
		{"healthy: +10%", 200, 0, 10 * time.Millisecond, "84,840", 840},
		{"healthy: +10%", 200, 0, 10 * time.Millisecond, "94,940", 940},
		{"healthy: capped at the configured limit", 200, 0, 10 * time.Millisecond, "100,1000", 1000},
		{"healthy: stays", 200, 0, 10 * time.Millisecond, "100,1000", 1000},
		{"too few samples: not judged", 19, 19, time.Second, "100,1000", 1000},
	}
	for i, s := range steps {
		lat := s.latency
		if lat == 0 {
			lat = c.Baseline()
		}
		period(t, c, clock, s.n, s.errs, lat)
		if got := limitsOf(m); got != s.want {
			t.Fatalf("period %d (%s): limits %s, want %s", i, s.name, got, s.want)
		}
		if got := c.Level(); got != float64(s.wantLevelPm)/1000 {
			t.Errorf("period %d (%s): Level() = %v, want %v", i, s.name, got, float64(s.wantLevelPm)/1000)
		}
	}
	if b := c.Baseline(); b < 10*time.Millisecond || b > 12*time.Millisecond {
		t.Errorf("Baseline() = %v, want about 10ms", b)
	}
}

func TestControllerFloorAndIdleRecovery(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Minute, Floor: 0.3, Baseline: time.Millisecond,
		StablePeriods: 2, Step: 0.05, Policies: []string{"p0"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		period(t, c, clock, 100, 10, 10*time.Millisecond)
	}
	if got := limitsOf(m); got != "30" {
		t.Fatalf("after ten bad periods: %s, want the floor 30", got)
	}
	// Six periods without a request: healthy; one step of 5% per two.
	clock.Advance(5 * time.Minute)
	period(t, c, clock, 0, 0, 0)
	if got := limitsOf(m); got != "45" {
		t.Errorf("after six idle periods: %s, want 45 (3 steps of 5)", got)
	}
	// A request arriving after the period evaluates it without Evaluate.
	clock.Advance(2 * time.Minute)
	c.Observe(time.Millisecond, 200)
	if got := limitsOf(m); got != "50" {
		t.Errorf("after Observe past two periods: %s, want 50 (one more step)", got)
	}
}

func TestControllerSurvivesReload(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, _ := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
	period(t, c, clock, 100, 10, 10*time.Millisecond)
	if got := limitsOf(m); got != "80" {
		t.Fatalf("after a bad period: %s, want 80", got)
	}
	// A reload with a new configured limit: the new rule set enters at
	// the same level, in the same swap (the middleware carries the
	// override over in proportion)...
	m.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", 200, ip))})
	if got := limitsOf(m); got != "160" {
		t.Fatalf("after the reload: %s, want 160 (0.8 of 200 at once)", got)
	}
	// ...and the next evaluation keeps the level on the new limit (a
	// slow period without errors holds the level at 0.8).
	period(t, c, clock, 100, 0, 10*time.Millisecond)
	if got := limitsOf(m); got != "160" {
		t.Errorf("next period: %s, want 160 (level 0.8 of 200)", got)
	}
	// Apply, called after a reload, does so at once: the service is still
	// in trouble and must not get the full limit for a period.
	m.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", 300, ip))})
	if err := c.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "240" {
		t.Errorf("Apply after a reload: %s, want 240 (level 0.8 of 300)", got)
	}
	if got := c.Level(); got != 0.8 {
		t.Errorf("Apply moved the level to %v", got)
	}
	// Without Apply, the next request observed notices the new rule set
	// and applies the level, within the period.
	m.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", 500, ip))})
	c.Observe(time.Millisecond, 200)
	if got := limitsOf(m); got != "400" {
		t.Errorf("first request after a reload without Apply: %s, want 400 (level 0.8 of 500)", got)
	}
}

// slowApp is an application that takes 5ms on clock and fails on /fail.
func slowApp(clock *algotest.Clock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(5 * time.Millisecond)
		if r.URL.Path == "/fail" {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		w.Write([]byte("ok"))
	})
}

// judgeSlowApp sends h (slowApp, its requests fed to c) one request that
// succeeds and two that fail, ends the period and checks that c, with a
// baseline of 1ms, lowered m's limit of 100 to 80.
func judgeSlowApp(t *testing.T, h http.Handler, c *adaptive.Controller, clock *algotest.Clock, m *middleware.Middleware) {
	t.Helper()
	for _, path := range []string{"/", "/fail", "/fail"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "80" {
		t.Errorf("after 5ms requests, 2 of 3 failing, baseline 1ms: %s, want 80", got)
	}
}

func TestControllerHandler(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, _ := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	h := c.Handler(slowApp(clock))
	judgeSlowApp(t, h, c, clock, m)
	// Flush reaches the underlying writer.
	fl := c.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush through the wrapper: %v", err)
		}
	}))
	rec := httptest.NewRecorder()
	fl.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if !rec.Flushed {
		t.Error("the recorder was not flushed")
	}
}

func TestControllerConfigErrors(t *testing.T) {
	m := newMiddleware(t, 100)
	for _, tc := range []struct {
		cfg   adaptive.Config
		field string
	}{
		{adaptive.Config{Period: -1}, "Period"},
		{adaptive.Config{LatencyFactor: 0.5}, "LatencyFactor"},
		{adaptive.Config{ErrorRate: 2}, "ErrorRate"},
		{adaptive.Config{Decrease: 1.2}, "Decrease"},
		{adaptive.Config{Step: 0.5}, "Step"},
		{adaptive.Config{Floor: -0.1}, "Floor"},
		{adaptive.Config{StablePeriods: -1}, "StablePeriods"},
		{adaptive.Config{MinSamples: -1}, "MinSamples"},
		{adaptive.Config{Baseline: -1}, "Baseline"},
		{adaptive.Config{Policies: []string{"nope"}}, "Policies"},
	} {
		if _, err := adaptive.New(m, tc.cfg); err == nil || !strings.Contains(err.Error(), "Config."+tc.field) || !strings.HasPrefix(err.Error(), "adaptive: ") {
			t.Errorf("New(%+v) = %v, want an error naming Config.%s", tc.cfg, err, tc.field)
		}
	}
	if _, err := adaptive.New(nil, adaptive.Config{}); err == nil {
		t.Error("New(nil target) = nil error")
	}
}

func TestFleet(t *testing.T) {
	m := newMiddleware(t, 100, 7)
	clock := algotest.NewClock(t0)
	n := 4
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Every: 10 * time.Second, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "25,1" {
		t.Fatalf("4 instances: %s, want 25,1 (7/4 rounded down)", got)
	}
	n = 2
	clock.Advance(9 * time.Second)
	f.Check()
	if got := limitsOf(m); got != "25,1" {
		t.Errorf("Check before Every: %s, want 25,1 (count not read yet)", got)
	}
	clock.Advance(time.Second)
	h := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := limitsOf(m); got != "50,3" || f.Instances() != 2 {
		t.Errorf("2 instances after Every: %s (%d), want 50,3", got, f.Instances())
	}
	n = 1
	if err := f.Update(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "100,7" {
		t.Errorf("1 instance: %s, want the configured 100,7", got)
	}
	n = 0 // a registry hiccup
	f.Update()
	if got := limitsOf(m); got != "100,7" || f.Instances() != 1 {
		t.Errorf("count 0: %s (%d), want the last good count kept", got, f.Instances())
	}
	// A reload changes a configured limit: the middleware carries its
	// override over in proportion in the same swap, and Update, called
	// after the reload, divides the new one exactly.
	n = 4
	f.Update()
	m.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", 400, ip)), policy.Must(policy.PerMinute("p1", 7, ip))})
	if got := limitsOf(m); got != "100,1" {
		t.Fatalf("after the reload: %s, want 100,1 (p0's quarter carried over, p1 unchanged keeps its share)", got)
	}
	if err := f.Update(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "100,1" {
		t.Errorf("Update after the reload: %s, want 100,1", got)
	}
	// Without Update, the next Check (a request through Handler) notices
	// the new rule set and divides its limits, before Every has passed.
	m.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", 800, ip)), policy.Must(policy.PerMinute("p1", 7, ip))})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := limitsOf(m); got != "200,1" {
		t.Errorf("first request after a reload without Update: %s, want 200,1", got)
	}
	if _, err := adaptive.NewFleet(m, adaptive.FleetConfig{}); err == nil || !strings.Contains(err.Error(), "Instances") {
		t.Errorf("NewFleet without Instances = %v", err)
	}
	if _, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 1 }, Policies: []string{"x"}}); err == nil {
		t.Error("NewFleet with an unknown policy = nil error")
	}
}

// TestControllerConcurrent observes from several goroutines while the
// clock crosses periods (run with -race); the limit must stay within
// [floor, configured].
func TestControllerConcurrent(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, _ := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Second, Baseline: time.Millisecond, MinSamples: 1})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 2000 {
				c.Observe(time.Duration(1+g*i%5)*time.Millisecond, 200+300*(i%3/2))
				if i%100 == 0 {
					clock.Advance(500 * time.Millisecond)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	c.Evaluate()
	if l := m.Set().Policies()[0].Spec().Limit; l < 50 || l > 100 {
		t.Errorf("limit %d outside [50, 100]", l)
	}
}

// TestControllerSlowIsExact guards the seed's rule "p99 above twice the
// baseline" against the latency histogram's rounding: a bucket's top is
// up to 25% above its bottom, and judging by a bucket's upper bound called
// a p99 of 1.8x the baseline slow.
func TestControllerSlowIsExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		latency time.Duration // of 99% of the requests; the other 1% take 1s
		slow    bool
	}{
		{"1.8x the baseline", 180 * time.Millisecond, false},
		{"exactly 2x: not above", 200 * time.Millisecond, false},
		{"2x plus 1ns", 200*time.Millisecond + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			// 1000 requests, 50 failing (5%): the period is failing; the
			// p99 (the 990th latency) decides.
			for i := range 1000 {
				lat, status := tc.latency, 200
				if i < 10 {
					lat = time.Second
				}
				if i%20 == 0 {
					status = 500
				}
				c.Observe(lat, status)
			}
			clock.Advance(time.Minute)
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			want := "100"
			if tc.slow {
				want = "80"
			}
			if got := limitsOf(m); got != want {
				t.Errorf("p99 %v, baseline 100ms, 5%% errors: limit %s, want %s", tc.latency, got, want)
			}
		})
	}
}

// TestReloadRaces reloads in a loop while requests are observed and
// checked (run with -race): once the reloads stop, the next request leaves
// every policy at the controller's level (p0) or the fleet's share (p1) of
// the last configured limits, whatever the interleaving.
func TestReloadRaces(t *testing.T) {
	m := newMiddleware(t, 100, 100)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, Policies: []string{"p0"}})
	if err != nil {
		t.Fatal(err)
	}
	period(t, c, clock, 100, 10, 10*time.Millisecond) // level 0.8
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 4 }, Clock: clock, Policies: []string{"p1"}})
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				c.Observe(time.Millisecond, 200)
				f.Check()
			}
		}()
	}
	for i := range 200 {
		m.SetPolicies([]*policy.Policy{
			policy.Must(policy.PerMinute("p0", int64(100+i), ip)),
			policy.Must(policy.PerMinute("p1", int64(400+4*i), ip)),
		})
	}
	stop.Store(true)
	wg.Wait()
	c.Observe(time.Millisecond, 200)
	f.Check()
	if got, want := limitsOf(m), fmt.Sprintf("%d,%d", 299*8/10, 1196/4); got != want {
		t.Errorf("after the reloads: %s, want %s", got, want)
	}
}

// countingTarget counts the rule sets its middleware builds.
type countingTarget struct {
	*middleware.Middleware
	sets atomic.Int64
}

func (t *countingTarget) SetLimit(name string, limit int64) error {
	before := t.Set()
	err := t.Middleware.SetLimit(name, limit)
	if t.Set() != before {
		t.sets.Add(1)
	}
	return err
}

// TestNoFightOverLimits: a Controller of every policy and a Fleet of one
// of them (a setup the package doc warns against) must not take turns
// rebuilding the rule set on every request; and a limit set by someone
// else is not a reload: the controller leaves it alone until it next
// judges a period.
func TestNoFightOverLimits(t *testing.T) {
	m := newMiddleware(t, 100, 100)
	target := &countingTarget{Middleware: m}
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(target, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := adaptive.NewFleet(target, adaptive.FleetConfig{Instances: func() int { return 4 }, Clock: clock, Policies: []string{"p1"}})
	if err != nil {
		t.Fatal(err)
	}
	target.sets.Store(0)
	for range 100 {
		f.Check()
		c.Observe(time.Millisecond, 200)
	}
	if n := target.sets.Load(); n > 2 {
		t.Errorf("%d rule sets built over 100 requests, want at most 2", n)
	}
	m.SetLimit("p0", 42)
	c.Observe(time.Millisecond, 200)
	if got := m.Set().Policies()[0].Spec().Limit; got != 42 {
		t.Errorf("after SetLimit(p0, 42) and a request: p0 at %d, want 42 (not a reload)", got)
	}
}

// TestMiddlewareFeedsController: with SetFeedback the middleware itself
// feeds the Controller the latency and status of each request it passed to
// the application, without wrapping the application (which requests are
// fed is middleware's TestFeedback).
func TestMiddlewareFeedsController(t *testing.T) {
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("p0", 100, ip))}, middleware.WithClock(clock))
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	var _ middleware.Feedback = c
	m.SetFeedback(c)
	h := m.Handler(slowApp(clock))
	judgeSlowApp(t, h, c, clock, m)
}

// TestIdleAfterJudgedPeriod: the periods without a request that follow a
// judged one count as healthy whether they are evaluated one by one (a
// ticker calling Evaluate) or together with it (by the first request after
// them): the level does not depend on who evaluates.
func TestIdleAfterJudgedPeriod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		errs    int
		latency time.Duration
	}{
		{"slow and failing", 10, 10 * time.Millisecond},
		{"slow only", 0, 10 * time.Millisecond},
		{"failing only", 10, time.Millisecond},
	} {
		levels := make([]float64, 2)
		for i, ticked := range []bool{true, false} {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 100, 10, 10*time.Millisecond) // down to 0.8
			for j := range 100 {
				status := 200
				if j < tc.errs {
					status = 503
				}
				c.Observe(tc.latency, status)
			}
			// This period, then three without a request.
			if ticked {
				for range 4 {
					clock.Advance(time.Minute)
					if err := c.Evaluate(); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				clock.Advance(4 * time.Minute)
				if err := c.Evaluate(); err != nil {
					t.Fatal(err)
				}
			}
			levels[i] = c.Level()
		}
		if levels[0] != levels[1] {
			t.Errorf("%s period then three idle ones: level %v evaluated each period, %v evaluated at once", tc.name, levels[0], levels[1])
		}
	}
}

// TestThresholdsResolved: the thresholds are kept in thousandths; a Step or
// a Decrease that would round to no change, or a LatencyFactor to 1, is an
// error rather than a controller that never recovers or never lowers.
func TestThresholdsResolved(t *testing.T) {
	m := newMiddleware(t, 100)
	for _, tc := range []struct {
		cfg   adaptive.Config
		field string
	}{
		{adaptive.Config{Step: 0.0004}, "Step"},
		{adaptive.Config{Decrease: 0.9996}, "Decrease"},
		{adaptive.Config{LatencyFactor: 1.0004}, "LatencyFactor"},
		{adaptive.Config{Floor: 0.0004}, "Floor"},
	} {
		if _, err := adaptive.New(m, tc.cfg); err == nil || !strings.Contains(err.Error(), "Config."+tc.field) || !strings.Contains(err.Error(), "must round to") {
			t.Errorf("New(%+v) = %v, want an error naming Config.%s and saying it must round to a thousandth", tc.cfg, err, tc.field)
		}
	}
	// The errors said "must be at least 0.001" while 0.0006, which rounds
	// to it, is accepted.
	if _, err := adaptive.New(m, adaptive.Config{Step: 0.0006, Floor: 0.0006}); err != nil {
		t.Errorf("Step and Floor 0.0006 (0.001 in thousandths): %v", err)
	}
	// The smallest values that resolve work: 0.001 steps back up.
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, Step: 0.001, Decrease: 0.999})
	if err != nil {
		t.Fatal(err)
	}
	period(t, c, clock, 100, 10, 10*time.Millisecond)
	if got := c.Level(); got != 0.999 {
		t.Fatalf("Decrease 0.999: level %v, want 0.999", got)
	}
	period(t, c, clock, 100, 0, time.Millisecond)
	if got := c.Level(); got != 1 {
		t.Errorf("Step 0.001: level %v, want 1", got)
	}
}

// TestLongIdleGap: a clock that jumps far ahead (a machine that booted
// with its clock in 1970 and then synchronised) with a short Period is
// evaluated in one step, not one loop turn per period passed.
func TestLongIdleGap(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Nanosecond, Baseline: time.Millisecond,
		MinSamples: 1, StablePeriods: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	c.Observe(10*time.Millisecond, 503)
	clock.Advance(time.Nanosecond)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Level(); got != 0.8 {
		t.Fatalf("level %v after a bad period, want 0.8", got)
	}
	// Over 2·2^40 idle periods: two steps up of StablePeriods 2^40 each
	// back to the configured limit; a loop turn per period takes hours.
	done := make(chan float64)
	go func() {
		clock.Advance(3<<40 - 1)
		c.Evaluate()
		done <- c.Level()
	}()
	if got := hangguard.Await(t, done, 10*time.Second, "Evaluate over 3·2^40 idle periods did not return"); got != 1 {
		t.Errorf("after 3·2^40 idle periods: level %v, want 1", got)
	}
}

// TestObserveAfterPeriodEnd: a request observed after the period ended
// belongs to the next period: it is not judged with the one it ends.
func TestObserveAfterPeriodEnd(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A period without requests, then a slow failing one after it ends.
	clock.Advance(time.Minute)
	c.Observe(10*time.Millisecond, 503)
	if got := c.Level(); got != 1 {
		t.Fatalf("the empty period, ended by a bad request after it: level %v, want 1", got)
	}
	// The next period holds that request: judged bad.
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Level(); got != 0.8 {
		t.Errorf("the period holding the bad request: level %v, want 0.8", got)
	}
}
