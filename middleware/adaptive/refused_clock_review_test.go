package adaptive_test

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestRefusedJudgesAsEvaluateClockMoves: TestRefusedJudgesAsEvaluate on a
// clock that also stands still and goes back (by a second, half a period,
// two periods: a clock without monotonic readings, corrected). Refused
// restarts the period as Evaluate does, and the two Controllers, fed the
// same random trace of requests ending, beginning and ending, with
// requests refused in between (told to one by Refused, to the other by an
// Evaluate), are at the same level and baseline after every step.
func TestRefusedJudgesAsEvaluateClockMoves(t *testing.T) {
	const period = time.Minute
	restarts, lowered := 0, 0
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		cfg := randomTraceConfig(rng, period)
		refused, rclock := newController(t, newMiddleware(t, 100), cfg)
		evaluated, eclock := newController(t, newMiddleware(t, 100), cfg)
		cs := []*adaptive.Controller{refused, evaluated}
		var inFlight [][2]interface{ End() }
		gaps := []time.Duration{0, 0, -time.Second, -period / 2, -2 * period, time.Second, 10 * time.Second,
			59 * time.Second, period, 90 * time.Second, 2 * period, 3 * period}
		lats := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}
		for step := range 400 {
			gap := gaps[rng.IntN(len(gaps))]
			if gap < 0 {
				restarts++
			}
			to := rclock.Now().Add(gap)
			rclock.Set(to)
			eclock.Set(to)
			switch r := rng.IntN(10); {
			case r < 3:
				refused.Refused()
				if err := evaluated.Evaluate(); err != nil {
					t.Fatal(err)
				}
			case r < 7 || len(inFlight) == 0 && r >= 8:
				lat, status := lats[rng.IntN(len(lats))], http.StatusOK
				if rng.IntN(3) == 0 {
					status = http.StatusServiceUnavailable
				}
				for _, c := range cs {
					c.Observe(lat, status)
				}
			case r < 8:
				inFlight = append(inFlight, [2]interface{ End() }{refused.Begin(), evaluated.Begin()})
			default:
				i := rng.IntN(len(inFlight))
				for _, s := range inFlight[i] {
					s.End()
				}
				inFlight = append(inFlight[:i], inFlight[i+1:]...)
			}
			if l, o := refused.Level(), evaluated.Level(); l != o {
				t.Fatalf("seed %d step %d (clock %v, %d in flight): level %v judged by Refused, %v by Evaluate", seed, step, to.Sub(t0), len(inFlight), l, o)
			}
			if l, o := refused.Baseline(), evaluated.Baseline(); l != o {
				t.Fatalf("seed %d step %d: baseline %v judged by Refused, %v by Evaluate", seed, step, l, o)
			}
		}
		if refused.Level() < 1 {
			lowered++
		}
		for _, s := range inFlight {
			for _, e := range s {
				e.End()
			}
		}
	}
	if restarts < 10_000 || lowered < 30 {
		t.Errorf("%d steps set the clock back, %d traces end lowered; want at least 10000 and 30", restarts, lowered)
	}
	t.Logf("%d steps set the clock back, %d traces of 300 end lowered", restarts, lowered)
}
