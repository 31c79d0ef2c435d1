package adaptive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigBoundsAtTheEdge: each threshold on both sides of the edge of
// its range, refused with exactly its own message (not the later check's
// "must round to"); a latency factor too large to hold in thousandths is
// as good as infinite, not an error.
func TestConfigBoundsAtTheEdge(t *testing.T) {
	m := newMiddleware(t, 100)
	for _, tc := range []struct {
		name string
		cfg  adaptive.Config
		want string // "" when taken
	}{
		{"latency factor 1", adaptive.Config{LatencyFactor: 1}, "adaptive: Config.LatencyFactor must be above 1"},
		{"latency factor 1e300", adaptive.Config{LatencyFactor: 1e300}, ""},
		{"error rate 1", adaptive.Config{ErrorRate: 1}, "adaptive: Config.ErrorRate must be between 0 and 1"},
		{"error rate 0.999", adaptive.Config{ErrorRate: 0.999}, ""},
		{"decrease 1", adaptive.Config{Decrease: 1}, "adaptive: Config.Decrease must be between 0 and 1"},
		{"step 0.1", adaptive.Config{Step: 0.1}, ""},
		{"step 0.101", adaptive.Config{Step: 0.101}, "adaptive: Config.Step must be above 0 and at most 0.1"},
		{"floor 1", adaptive.Config{Floor: 1}, ""},
		{"floor 1.5", adaptive.Config{Floor: 1.5}, "adaptive: Config.Floor must be above 0 and at most 1"},
	} {
		c, err := adaptive.New(m, tc.cfg)
		switch {
		case tc.want == "" && (c == nil || err != nil):
			t.Errorf("%s: New = %v, %v; want it taken", tc.name, c, err)
		case tc.want != "" && (c != nil || err == nil || err.Error() != tc.want):
			t.Errorf("%s: New = %v, %v; want nil, %q", tc.name, c, err, tc.want)
		}
	}
}

// newController returns a Controller of target with cfg on a clock at t0,
// and the clock.
func newController(t *testing.T, target adaptive.Target, cfg adaptive.Config) (*adaptive.Controller, *algotest.Clock) {
	t.Helper()
	clock := algotest.NewClock(t0)
	cfg.Clock = clock
	c, err := adaptive.New(target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clock
}

// TestConfigDefaultsJudge: by default a period is judged from 20 samples
// on, and a status of 500 or more is an error (499 is not).
func TestConfigDefaultsJudge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		status int
		want   float64
	}{
		{"19 samples", 19, 503, 1},
		{"20 samples", 20, 503, 0.8},
		{"status 499", 20, 499, 1},
		{"status 500", 20, 500, 0.8},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond})
		for range tc.n {
			c.Observe(10*time.Millisecond, tc.status) // slow, against a 1 ms baseline
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if got := c.Level(); got != tc.want {
			t.Errorf("%s: level %v after a slow period, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPeriodEndsAtItsEndInstant: a period ends at its end instant, not
// before: Evaluate within it judges nothing, and the first request at the
// end instant itself ends it (judging it) before it is counted.
func TestPeriodEndsAtItsEndInstant(t *testing.T) {
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond})
	for range 20 {
		c.Observe(10*time.Millisecond, 503) // slow and failing
	}
	clock.Advance(time.Minute - time.Nanosecond)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Level(); got != 1 {
		t.Fatalf("Evaluate 1 ns before the period's end: level %v, want 1 (nothing judged)", got)
	}
	clock.Advance(time.Nanosecond)
	c.Observe(time.Millisecond, 200)
	if got := c.Level(); got != 0.8 {
		t.Errorf("a request at the period's end instant: level %v, want 0.8 (the period judged)", got)
	}
}

// TestStableCountRestartsAfterTrouble: with StablePeriods 2 the level
// steps up after two healthy periods in a row; a period that is slow, or
// one that is slow and failing, between them starts the count again.
func TestStableCountRestartsAfterTrouble(t *testing.T) {
	for _, tc := range []struct {
		name       string
		errs       int           // of the troubled period's 20 requests
		latency    time.Duration // of the troubled period's requests
		want       float64       // after it and one healthy period
		wantLatest float64       // after one more healthy period
	}{
		{"slow", 0, 10 * time.Millisecond, 0.8, 0.9},
		{"slow and failing", 20, 10 * time.Millisecond, 0.64, 0.74},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond, StablePeriods: 2})
		period(t, c, clock, 20, 20, 10*time.Millisecond) // 0.8
		period(t, c, clock, 20, 0, time.Millisecond)     // healthy: one of two
		period(t, c, clock, 20, tc.errs, tc.latency)     // the count starts again
		period(t, c, clock, 20, 0, time.Millisecond)
		if got := c.Level(); got != tc.want {
			t.Errorf("%s: level %v after one healthy period since, want %v", tc.name, got, tc.want)
		}
		period(t, c, clock, 20, 0, time.Millisecond)
		if got := c.Level(); math.Abs(got-tc.wantLatest) > 1e-9 {
			t.Errorf("%s: level %v after two healthy periods since, want %v", tc.name, got, tc.wantLatest)
		}
	}
}

// TestSlowMeansP99: a period is slow when its p99 is over the threshold,
// counted exactly: of 200 requests, two over it leave the p99 (rank 198)
// under it, three do not. (Three errors make every period failing.)
func TestSlowMeansP99(t *testing.T) {
	for slowN, want := range map[int]float64{2: 1, 3: 0.8} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond})
		for i := range 200 {
			latency, status := time.Millisecond, 200
			if i < slowN {
				latency = 10 * time.Millisecond
			} else if i < slowN+3 {
				status = 503
			}
			c.Observe(latency, status)
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if got := c.Level(); got != want {
			t.Errorf("%d of 200 slow, 3 failing: level %v, want %v", slowN, got, want)
		}
	}
}

// TestBaselineFollowsHealthyPeriods: without a configured Baseline, a
// healthy period moves the baseline an eighth of the way to its p99; a
// configured Baseline stays as it is.
func TestBaselineFollowsHealthyPeriods(t *testing.T) {
	for _, configured := range []time.Duration{0, 5 * time.Millisecond} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: configured})
		period(t, c, clock, 20, 0, 4*time.Millisecond)
		first := c.Baseline()
		period(t, c, clock, 20, 0, 8*time.Millisecond) // under twice the baseline: healthy
		got := c.Baseline()
		switch {
		case configured != 0 && (first != configured || got != configured):
			t.Errorf("configured %v: baseline %v then %v, want it kept", configured, first, got)
		case configured == 0 && !(got > first && got < first+(8*time.Millisecond-first)/4):
			t.Errorf("baseline %v after a period at 4 ms, then %v after one at 8 ms; want it moved up an eighth of the way", first, got)
		}
	}
}

// TestFleetConfigEdges: NewFleet's refusals, exactly (its first Update's
// error too), and its defaults: the system clock, and 10 seconds between
// two readings of the count.
func TestFleetConfigEdges(t *testing.T) {
	m := newMiddleware(t, 100)
	one := func() int { return 1 }
	for _, tc := range []struct {
		name   string
		target adaptive.Target
		cfg    adaptive.FleetConfig
		want   string
	}{
		{"nil target", nil, adaptive.FleetConfig{Instances: one}, "adaptive: target is nil"},
		{"negative Every", m, adaptive.FleetConfig{Instances: one, Every: -1}, "adaptive: FleetConfig.Every is negative"},
	} {
		if f, err := adaptive.NewFleet(tc.target, tc.cfg); f != nil || err == nil || err.Error() != tc.want {
			t.Errorf("%s: NewFleet = %v, %v; want nil, %q", tc.name, f, err, tc.want)
		}
	}
	// The first Update's error is NewFleet's.
	if f, err := adaptive.NewFleet(failingTarget{m}, adaptive.FleetConfig{Instances: func() int { return 2 }}); f != nil || err == nil || err.Error() != "refused p0" {
		t.Errorf("NewFleet on a target refusing SetLimit = %v, %v; want nil, \"refused p0\"", f, err)
	}
	// No Clock: the system's.
	if f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: one}); f == nil || err != nil {
		t.Fatalf("NewFleet without a Clock = %v, %v; want it taken", f, err)
	} else {
		f.Check()
	}
	clock := algotest.NewClock(t0)
	n := 4
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	n = 2
	clock.Advance(10*time.Second - time.Nanosecond)
	f.Check()
	if got := limitsOf(m); got != "25" {
		t.Errorf("Check 1 ns before the default Every: %s, want 25 (count not read yet)", got)
	}
	clock.Advance(time.Nanosecond)
	f.Check()
	if got := limitsOf(m); got != "50" {
		t.Errorf("Check at the default Every: %s, want 50", got)
	}
}

// failingTarget refuses every SetLimit (and SetLimitUnguarded, which a
// Fleet calls), naming the policy.
type failingTarget struct{ *middleware.Middleware }

func (failingTarget) SetLimit(name string, _ int64) error { return errors.New("refused " + name) }

func (failingTarget) SetLimitUnguarded(name string, _ int64) error {
	return errors.New("refused " + name)
}

// TestEvaluateReturnsFirstSetLimitError: an evaluation that sets limits
// returns the first SetLimit error, in the policies' order.
func TestEvaluateReturnsFirstSetLimitError(t *testing.T) {
	c, clock := newController(t, failingTarget{newMiddleware(t, 100, 50)}, adaptive.Config{Baseline: time.Millisecond})
	for range 20 {
		c.Observe(10*time.Millisecond, 503)
	}
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err == nil || err.Error() != "refused p0" {
		t.Errorf("Evaluate = %v, want the first policy's refusal", err)
	}
}

// TestFloorLimitRoundsUp: at the floor, a policy's limit is the floor's
// share of its configured limit rounded up (1001 × 0.001 = 1.001: 2).
func TestFloorLimitRoundsUp(t *testing.T) {
	m := newMiddleware(t, 1001)
	c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond, Floor: 0.001, Decrease: 0.001})
	period(t, c, clock, 20, 20, 10*time.Millisecond)
	if got := limitsOf(m); c.Level() != 0.001 || got != "2" {
		t.Errorf("at the floor: level %v, limit %s; want 0.001 and 2", c.Level(), got)
	}
}

// TestLevelChangesLogged: one record per change of level, at Warn when
// lowered and Info when raised, giving the new and the previous level as
// fractions; a period that leaves it logs nothing. The record's own
// severity stays under slog's "level" key: the fractions have keys of
// their own (a JSON handler wrote both under "level", and a reader kept
// one of the two).
func TestLevelChangesLogged(t *testing.T) {
	var buf bytes.Buffer
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	period(t, c, clock, 20, 20, 10*time.Millisecond) // 0.8
	period(t, c, clock, 20, 0, time.Millisecond)     // 0.9
	period(t, c, clock, 20, 0, time.Millisecond)     // 1
	period(t, c, clock, 20, 0, time.Millisecond)     // 1, unchanged
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if n := strings.Count(line, `"level":`); n != 1 {
			t.Errorf("record %s has %d \"level\" keys, want 1", line, n)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%v %v<-%v", rec["level"], rec["limit_level"], rec["previous_level"]))
	}
	if want := "WARN 0.8<-1,INFO 0.9<-0.8,INFO 1<-0.9"; strings.Join(got, ",") != want {
		t.Errorf("records %q, want %s", got, want)
	}
}

// TestControlledPolicyRemovedByReload: a policy named in Config.Policies
// that a reload removed is passed over when the limits are set; the
// policies not named keep their configured limits.
func TestControlledPolicyRemovedByReload(t *testing.T) {
	m := newMiddleware(t, 100, 50)
	c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond, Policies: []string{"p0"}})
	if err := m.SetPolicies([]*policy.Policy{m.Configured("p1")}); err != nil {
		t.Fatal(err)
	}
	period(t, c, clock, 20, 20, 10*time.Millisecond)
	if got := limitsOf(m); c.Level() != 0.8 || got != "50" {
		t.Errorf("p0 removed: level %v, limits %s; want 0.8 and p1's 50", c.Level(), got)
	}
}

// bucketUpper is the largest latency of the histogram bucket holding d:
// latencies under 4 ns exactly, the others in four buckets per power of
// two (from 2^k, each 2^(k−2) wide).
func bucketUpper(d time.Duration) time.Duration {
	if d < 4 {
		return max(d, 1)
	}
	k := 0
	for time.Duration(1)<<(k+1) <= d {
		k++
	}
	step := time.Duration(1) << (k - 2)
	return (d/step+1)*step - 1
}

// TestBaselineIsP99Bucket: the first judged period's p99 becomes the
// baseline when none is configured: the upper end of the histogram bucket
// of the sample of rank ceil(0.99n), for latencies from 1 ns to days.
func TestBaselineIsP99Bucket(t *testing.T) {
	judge := func(samples map[time.Duration]int) time.Duration {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{MinSamples: 1})
		for d, n := range samples {
			for range n {
				c.Observe(d, 200)
			}
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		return c.Baseline()
	}
	for _, d := range []time.Duration{1, 2, 3, 4, 5, 7, 8, 1000, time.Millisecond, 10 * time.Millisecond, 1<<48 + 12345} {
		if got, want := judge(map[time.Duration]int{d: 1}), bucketUpper(d); got != want {
			t.Errorf("one sample of %v: baseline %v, want %v", d, got, want)
		}
	}
	fast, slow := time.Millisecond, 10*time.Millisecond
	if got, want := judge(map[time.Duration]int{fast: 99, slow: 1}), bucketUpper(fast); got != want {
		t.Errorf("99 at %v, 1 at %v: baseline %v, want %v (rank 99)", fast, slow, got, want)
	}
	if got, want := judge(map[time.Duration]int{fast: 98, slow: 2}), bucketUpper(slow); got != want {
		t.Errorf("98 at %v, 2 at %v: baseline %v, want %v (rank 99)", fast, slow, got, want)
	}
}

// TestFleetCounts: a first count below 1 is this instance alone (the
// configured limits); a reload
// within Every is applied at the next Check, each limit divided exactly
// (not carried over in proportion); a driven policy a reload removed is
// passed over; Update returns the first SetLimit error.
func TestFleetCounts(t *testing.T) {
	m := newMiddleware(t, 100, 7)
	clock := algotest.NewClock(t0)
	n := 0
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Every: 10 * time.Second, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "100,7" || f.Instances() != 1 {
		t.Fatalf("first count 0: %s (%d instances), want 100,7 (1)", got, f.Instances())
	}
	n = 2
	if err := f.Update(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "50,3" {
		t.Fatalf("2 instances: %s, want 50,3", got)
	}
	// p1 reloaded at 9: carried over as 9·3/7 rounded down, 3; divided, 4.
	if err := m.SetPolicies([]*policy.Policy{m.Configured("p0"), policy.Must(policy.PerMinute("p1", 9, ip))}); err != nil {
		t.Fatal(err)
	}
	n = 4 // not read before Every has passed
	f.Check()
	if got := limitsOf(m); got != "50,4" {
		t.Errorf("a reload within Every, then Check: %s, want 50,4 (for 2 instances)", got)
	}

	driven, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 2 }, Policies: []string{"p0"}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{m.Configured("p1")}); err != nil {
		t.Fatal(err)
	}
	if err := driven.Update(); err != nil {
		t.Errorf("Update after the driven policy was removed: %v", err)
	}

	two := newMiddleware(t, 100, 50)
	if f, err := adaptive.NewFleet(failingTarget{two}, adaptive.FleetConfig{Instances: func() int { return 2 }}); f != nil || err == nil || err.Error() != "refused p0" {
		t.Errorf("NewFleet on a target refusing SetLimit = %v, %v; want nil and the first refusal, \"refused p0\"", f, err)
	}
}

// TestFleetEveryCenturiesAndLog: an Every too long to add to the clock's
// reading means the count is never read again by Check; each new count
// (and only a new one) is logged with the previous one; the Handler
// checks, then serves the request.
func TestFleetEveryCenturiesAndLog(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	var buf bytes.Buffer
	n := 2
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Every: math.MaxInt64, Clock: clock,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n = 4
	clock.Advance(100 * 365 * 24 * time.Hour)
	served := false
	f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true })).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := limitsOf(m); got != "50" || !served {
		t.Errorf("a century later, through the Handler: %s, served %v; want 50 (count not read again), served", got, served)
	}
	for _, count := range []int{4, 4, 1} {
		n = count
		if err := f.Update(); err != nil {
			t.Fatal(err)
		}
	}
	n = 8 // after an Update a century on, Check still never reads it
	clock.Advance(time.Hour)
	f.Check()
	if got := limitsOf(m); got != "100" {
		t.Errorf("Check after an Update a century on: %s, want 100 (count not read again)", got)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%v<-%v", rec["instances"], rec["previous"]))
	}
	if want := "2<-0,4<-2,1<-4"; strings.Join(got, ",") != want {
		t.Errorf("fleet size records %v, want %s", got, want)
	}
}

// reloadEveryTime reloads its middleware (a new configured p0) at every
// SetLimit, when armed, and counts the calls.
type reloadEveryTime struct {
	*middleware.Middleware
	armed bool
	calls int
}

func (t *reloadEveryTime) SetLimit(name string, limit int64) error {
	if err := t.reload(); err != nil {
		return err
	}
	return t.Middleware.SetLimit(name, limit)
}

// SetLimitUnguarded is SetLimit's twin, which a Fleet calls.
func (t *reloadEveryTime) SetLimitUnguarded(name string, limit int64) error {
	if err := t.reload(); err != nil {
		return err
	}
	return t.Middleware.SetLimitUnguarded(name, limit)
}

func (t *reloadEveryTime) reload() error {
	t.calls++
	if t.armed {
		l := t.Configured("p0").Spec().Limit + 1
		return t.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", l, ip))})
	}
	return nil
}

// TestSettleAtMostThreeTimesMore: limits are set once when no reload
// comes between, and set again while reloads keep coming, at most three
// times more.
func TestSettleAtMostThreeTimesMore(t *testing.T) {
	for armed, want := range map[bool]int{false: 1, true: 4} {
		target := &reloadEveryTime{Middleware: newMiddleware(t, 100)}
		f, err := adaptive.NewFleet(target, adaptive.FleetConfig{Instances: func() int { return 2 }})
		if err != nil {
			t.Fatal(err)
		}
		target.armed, target.calls = armed, 0
		if err := f.Update(); err != nil {
			t.Fatal(err)
		}
		if target.calls != want {
			t.Errorf("reloading at every SetLimit %v: %d SetLimit calls in an Update, want %d", armed, target.calls, want)
		}
	}
}

// configuredCounter counts the calls of Configured on its middleware.
type configuredCounter struct {
	*middleware.Middleware
	calls int
}

func (t *configuredCounter) Configured(name string) *policy.Policy {
	t.calls++
	return t.Middleware.Configured(name)
}

// TestObserveWithinPeriodIsFast: after a period is judged, the requests of
// the next one take the fast path (no lock, no reading of the configured
// policies) until it ends, as in the first period.
func TestObserveWithinPeriodIsFast(t *testing.T) {
	target := &configuredCounter{Middleware: newMiddleware(t, 100)}
	c, clock := newController(t, target, adaptive.Config{Baseline: time.Millisecond})
	for p := range 3 {
		c.Observe(time.Millisecond, 200) // may settle what the last apply left
		target.calls = 0
		for range 10 {
			c.Observe(time.Millisecond, 200)
		}
		if target.calls != 0 {
			t.Errorf("period %d: %d calls of Configured over 10 requests within it, want 0", p, target.calls)
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSlowEdges: a threshold of 1 ns (a 1 ns baseline times 1.5) is a
// threshold, not "unknown"; and with 99 requests the p99 is the 99th
// (ceil(98.01)), so one request over the threshold makes the period slow.
// Every request fails, so a slow period lowers the limit.
func TestSlowEdges(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cfg          adaptive.Config
		n, over      int
		latency, not time.Duration // of the requests over the threshold, of the others
		want         float64
	}{
		{"threshold 1 ns", adaptive.Config{Baseline: 1, LatencyFactor: 1.5}, 20, 20, 2, 1, 0.8},
		{"99 requests, 1 slow", adaptive.Config{Baseline: time.Millisecond}, 99, 1, 10 * time.Millisecond, time.Millisecond, 0.8},
		{"99 requests, none slow", adaptive.Config{Baseline: time.Millisecond}, 99, 0, 10 * time.Millisecond, time.Millisecond, 1},
	} {
		c, clock := newController(t, newMiddleware(t, 100), tc.cfg)
		for i := range tc.n {
			latency := tc.not
			if i < tc.over {
				latency = tc.latency
			}
			c.Observe(latency, 503)
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if got := c.Level(); got != tc.want {
			t.Errorf("%s: level %v after a failing period, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBaselineMovesAnEighth: a learned baseline moves exactly an eighth
// (rounded toward it) of the way to a healthy period's p99, up or down.
func TestBaselineMovesAnEighth(t *testing.T) {
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{})
	b := bucketUpper(4 * time.Millisecond)
	period(t, c, clock, 20, 0, 4*time.Millisecond)
	if got := c.Baseline(); got != b {
		t.Fatalf("baseline %v after a first period at 4 ms, want %v", got, b)
	}
	for _, d := range []time.Duration{8 * time.Millisecond, time.Millisecond} {
		period(t, c, clock, 20, 0, d)
		b += (bucketUpper(d) - b) / 8
		if got := c.Baseline(); got != b {
			t.Errorf("baseline %v after a healthy period at %v, want %v", got, d, b)
		}
	}
}

// TestLevelChangeRecordAttrs: a level change's record gives the period's
// p99, the baseline, its requests and errors.
func TestLevelChangeRecordAttrs(t *testing.T) {
	var buf bytes.Buffer
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	period(t, c, clock, 25, 20, 10*time.Millisecond) // 0.8
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	got := fmt.Sprint(rec["p99"], " ", rec["baseline"], " ", rec["requests"], " ", rec["errors"])
	if want := fmt.Sprint(bucketUpper(10*time.Millisecond), " 1ms 25 20"); got != want {
		t.Errorf("record %s: p99, baseline, requests, errors %q, want %q", buf.String(), got, want)
	}
}

// TestLatencyFactorHugeOverBaseline: a latency factor too large for
// thousandths times a baseline of 4 µs or more (a threshold of 2^64 ns
// or more) is a threshold no request reaches, configured or learned: no
// period is slow.
func TestLatencyFactorHugeOverBaseline(t *testing.T) {
	for _, baseline := range []time.Duration{0, 4 * time.Microsecond} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: baseline, LatencyFactor: 1e300})
		period(t, c, clock, 20, 0, time.Millisecond) // learns a 1 ms baseline, if none
		period(t, c, clock, 20, 20, 1000*time.Hour)  // failing, not slow
		if got := c.Level(); got != 1 {
			t.Errorf("baseline %v, factor 1e300: level %v after a failing period of hours, want 1", baseline, got)
		}
	}
}

// limitRecorder records the SetLimit calls on its middleware.
type limitRecorder struct {
	*middleware.Middleware
	calls []string
}

func (t *limitRecorder) SetLimit(name string, limit int64) error {
	t.calls = append(t.calls, fmt.Sprintf("%s=%d", name, limit))
	return t.Middleware.SetLimit(name, limit)
}

// TestRestoredLimitIsConfigured: back at the configured level, a
// Controller sets a limit of 0 (the configured one, as Target.SetLimit
// says), not the configured limit it read, which a target may keep as a
// limit of its own.
func TestRestoredLimitIsConfigured(t *testing.T) {
	target := &limitRecorder{Middleware: newMiddleware(t, 100)}
	c, clock := newController(t, target, adaptive.Config{Baseline: time.Millisecond})
	period(t, c, clock, 20, 20, 10*time.Millisecond) // 0.8
	period(t, c, clock, 20, 0, time.Millisecond)     // 0.9
	period(t, c, clock, 20, 0, time.Millisecond)     // 1
	if got, want := strings.Join(target.calls, ","), "p0=0,p0=80,p0=90,p0=0"; got != want {
		t.Errorf("SetLimit calls %s, want %s", got, want)
	}
}

// TestHugeLatencyFactors: the threshold LatencyFactor times the baseline
// is exact while the factor holds in thousandths (3e15 times 1 ns is 34.7
// days: 40 days is slow), and a larger one acts as 2^62 thousandths (1e300
// times 1 ns: about 53 days, so 40 days is not slow; see
// TestLatencyFactorCap).
func TestHugeLatencyFactors(t *testing.T) {
	for _, tc := range []struct {
		factor float64
		want   float64
	}{
		{3e15, 0.8},
		{1e300, 1},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: 1, LatencyFactor: tc.factor})
		period(t, c, clock, 20, 20, 40*24*time.Hour) // failing
		if got := c.Level(); got != tc.want {
			t.Errorf("factor %g over a 1 ns baseline: level %v after a failing period at 40 days, want %v", tc.factor, got, tc.want)
		}
	}
}

// TestLatencyFactorCap: a factor above 2^62 thousandths acts as 2^62
// thousandths (Config.LatencyFactor): 6e15 over a 1 ns baseline makes a
// threshold of about 53.4 days, not 69.4, so 60 days is slow and 50 days
// is not.
func TestLatencyFactorCap(t *testing.T) {
	for _, tc := range []struct {
		p99  time.Duration
		want float64
	}{
		{60 * 24 * time.Hour, 0.8},
		{50 * 24 * time.Hour, 1},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: 1, LatencyFactor: 6e15})
		period(t, c, clock, 20, 20, tc.p99)
		if got := c.Level(); got != tc.want {
			t.Errorf("factor 6e15 over a 1 ns baseline, p99 %v: level %v, want %v", tc.p99, got, tc.want)
		}
	}
}

// TestTypedNilTarget: a nil *middleware.Middleware passed as the Target
// (a variable never assigned) is refused by New and NewFleet, as an
// untyped nil is, instead of a nil-pointer panic.
func TestTypedNilTarget(t *testing.T) {
	var m *middleware.Middleware
	if c, err := adaptive.New(m, adaptive.Config{}); c != nil || err == nil || err.Error() != "adaptive: target is nil" {
		t.Errorf("New(nil *Middleware) = %v, %v; want nil, the error for a nil target", c, err)
	}
	if f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 1 }}); f != nil || err == nil || err.Error() != "adaptive: target is nil" {
		t.Errorf("NewFleet(nil *Middleware) = %v, %v; want nil, the error for a nil target", f, err)
	}
}
