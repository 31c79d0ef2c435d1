package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
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
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
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
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
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
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond, StablePeriods: 2})
		if err != nil {
			t.Fatal(err)
		}
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
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
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
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: configured})
		if err != nil {
			t.Fatal(err)
		}
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
