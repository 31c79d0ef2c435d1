package adaptive_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRandomTracesHoldTheBounds drives Controllers of random thresholds
// (Floor up to 1 and down to 0.001, Periods from 1 ns to 200 years, a
// configured or a learned baseline) with random traces of Observe (of
// latencies 0, negative, 1 ns to math.MaxInt64, and math.MinInt64),
// Begin and End, clock jumps (forward and back, up to the ends of the
// int64s), Evaluate, reloads and Apply. After every step the level is
// between Floor and 1 and the baseline not negative; at the end, every
// request over, empty periods climb the level back to 1 (none is left
// in flight). The limits are exactly the level's (Apply after the
// trace): rounded down, not below Floor rounded up, nor 1, of configured
// limits 3, 100 and 999,999,937.
func TestRandomTracesHoldTheBounds(t *testing.T) {
	lowered := 0
	for seed := range 1000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		m := newMiddleware(t, 3, 100, 999_999_937)
		clock := algotest.NewClock(t0)
		floors := []float64{0.5, 0.3, 0.001, 1, 0.999}
		floor := floors[rng.IntN(len(floors))]
		periods := []time.Duration{time.Minute, time.Nanosecond, 17, 200 * 365 * 24 * time.Hour, time.Second}
		cfg := adaptive.Config{Clock: clock, Period: periods[rng.IntN(len(periods))], Floor: floor,
			MinSamples: 1 + rng.IntN(5), StablePeriods: 1 + rng.IntN(3)}
		if rng.IntN(2) == 0 {
			cfg.Baseline = time.Duration(1 + rng.Int64N(int64(time.Second)))
		}
		c, err := adaptive.New(m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var spans []interface{ End() }
		lats := []time.Duration{0, -5, 1, time.Millisecond, time.Second, time.Hour, math.MaxInt64, math.MinInt64}
		jumps := []time.Duration{time.Nanosecond, time.Second, time.Minute, -time.Minute, -24 * time.Hour,
			100 * 365 * 24 * time.Hour, -100 * 365 * 24 * time.Hour, math.MaxInt64, math.MinInt64}
		minLevel := 1.0
		for step := range 200 {
			switch rng.IntN(8) {
			case 0, 1, 2:
				c.Observe(lats[rng.IntN(len(lats))], []int{200, 503, 500, 404}[rng.IntN(4)])
			case 3:
				spans = append(spans, c.Begin())
			case 4:
				if len(spans) > 0 {
					i := rng.IntN(len(spans))
					spans[i].End()
					spans = append(spans[:i], spans[i+1:]...)
				}
			case 5:
				clock.Set(clock.Now().Add(jumps[rng.IntN(len(jumps))]))
			case 6:
				if err := c.Evaluate(); err != nil {
					t.Fatalf("seed %d step %d: Evaluate: %v", seed, step, err)
				}
			case 7:
				if rng.IntN(10) == 0 {
					if err := m.SetPolicies([]*policy.Policy{m.Configured("p0"), m.Configured("p1"), m.Configured("p2")}); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Apply(); err != nil {
					t.Fatalf("seed %d step %d: Apply: %v", seed, step, err)
				}
			}
			level := c.Level()
			if !(level >= math.Round(floor*1000)/1000 && level <= 1) {
				t.Fatalf("seed %d step %d: level %v, Floor %v", seed, step, level, floor)
			}
			if b := c.Baseline(); b < 0 {
				t.Fatalf("seed %d step %d: baseline %v", seed, step, b)
			}
			minLevel = min(minLevel, level)
		}
		if minLevel < 1 {
			lowered++
		}
		// The limits of the level, set again by Apply.
		if err := c.Apply(); err != nil {
			t.Fatal(err)
		}
		level, fl := int64(math.Round(c.Level()*1000)), int64(math.Round(floor*1000))
		var want []any
		for _, conf := range []int64{3, 100, 999_999_937} {
			l := conf
			if level < 1000 {
				l = max(1, conf*level/1000, (conf*fl+999)/1000)
			}
			want = append(want, l)
		}
		if got := limitsOf(m); got != fmt.Sprintf("%d,%d,%d", want...) {
			t.Fatalf("seed %d: limits %s at level %v, want %v", seed, got, c.Level(), want)
		}
		for _, s := range spans {
			s.End()
		}
		for k := 0; c.Level() < 1 && k < 40*cfg.StablePeriods; k++ {
			clock.Set(clock.Now().Add(cfg.Period))
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
		}
		if got := limitsOf(m); c.Level() != 1 || got != "3,100,999999937" {
			t.Errorf("seed %d: level %v, limits %s after %d empty periods of %v, nothing in flight; want 1, the configured limits",
				seed, c.Level(), got, 40*cfg.StablePeriods, cfg.Period)
		}
	}
	if lowered < 100 {
		t.Errorf("the level was lowered in %d traces of 1000, want many (the traces do not reach the arithmetic)", lowered)
	}
}
