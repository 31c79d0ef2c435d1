package adaptive_test

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestLazyJudgesAsATicker: a Controller judged only by the requests it
// sees (Observe, Begin, End) reaches the level and baseline of one whose
// Evaluate runs at every period's end, as the package documentation says:
// the periods that passed without a request are healthy, or held from the
// first whose end finds MinSamples requests in flight over the threshold.
// Both are fed the same random trace of requests ending (fast or slow,
// failing or not), beginning, hanging and ending, over gaps of up to ten
// periods.
func TestLazyJudgesAsATicker(t *testing.T) {
	const period = time.Minute
	lowered := 0
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		cfg := randomTraceConfig(rng, period)
		lazy, lclock := newController(t, newMiddleware(t, 100), cfg)
		ticked, tclock := newController(t, newMiddleware(t, 100), cfg)
		type pair struct{ l, t interface{ End() } }
		var spans []pair
		low := false
		gaps := []time.Duration{0, time.Second, 10 * time.Second, 59 * time.Second, period, 90 * time.Second, 2 * period, 3 * period, 10 * period}
		lats := []time.Duration{time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 100 * time.Millisecond, time.Second}
		for step := range 300 {
			to := lclock.Now().Add(gaps[rng.IntN(len(gaps))])
			// The ticker: an Evaluate at every period's end on the way.
			tickTo(t, ticked, tclock, period, to)
			lclock.Set(to)
			// Each step is something the lazy Controller is told of: it is
			// judged only then.
			switch r := rng.IntN(10); {
			case r < 6 || r >= 8 && len(spans) == 0:
				lat, status := lats[rng.IntN(len(lats))], http.StatusOK
				if rng.IntN(4) == 0 {
					status = http.StatusServiceUnavailable
				}
				lazy.Observe(lat, status)
				ticked.Observe(lat, status)
			case r < 8:
				spans = append(spans, pair{lazy.Begin(), ticked.Begin()})
			default:
				i := rng.IntN(len(spans))
				spans[i].l.End()
				spans[i].t.End()
				spans = append(spans[:i], spans[i+1:]...)
			}
			if l, tk := lazy.Level(), ticked.Level(); l != tk {
				t.Fatalf("seed %d step %d (%v, %d in flight): level %v judged lazily, %v by a ticker", seed, step, to.Sub(t0), len(spans), l, tk)
			}
			low = low || lazy.Level() < 1
			if l, tk := lazy.Baseline(), ticked.Baseline(); l != tk {
				t.Fatalf("seed %d step %d: baseline %v judged lazily, %v by a ticker", seed, step, l, tk)
			}
		}
		for _, s := range spans {
			s.l.End()
			s.t.End()
		}
		if low {
			lowered++
		}
	}
	// The traces lower the level, and hold it with requests in flight.
	if lowered < 100 {
		t.Errorf("%d traces of 300 lowered the level, want at least 100", lowered)
	}
}

// tickTo moves clock, ticked's, to the instant to as a ticker of period
// (from t0) would see it: ticked evaluates at every period's end on the
// way.
func tickTo(t *testing.T, ticked *adaptive.Controller, clock *algotest.Clock, period time.Duration, to time.Time) {
	t.Helper()
	for {
		end := t0.Add((clock.Now().Sub(t0)/period + 1) * period)
		if end.After(to) {
			break
		}
		clock.Set(end)
		if err := ticked.Evaluate(); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(to)
}

// randomTraceConfig returns the Config of a random trace's Controllers:
// period, MinSamples and StablePeriods of 1 to 3, and half the time a
// fixed Baseline of 10 ms (a learned one otherwise).
func randomTraceConfig(rng *rand.Rand, period time.Duration) adaptive.Config {
	cfg := adaptive.Config{Period: period, MinSamples: 1 + rng.IntN(3), StablePeriods: 1 + rng.IntN(3)}
	if rng.IntN(2) == 0 {
		cfg.Baseline = 10 * time.Millisecond
	}
	return cfg
}
