package adaptive_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// boundsTarget checks every limit a Controller sets against the bounds
// the documentation gives: 0 (the configured limit), or from Floor of the
// configured limit rounded up (at least 1) to the configured limit.
type boundsTarget struct {
	*middleware.Middleware
	t     *testing.T
	floor float64
	calls int
}

func (b *boundsTarget) SetLimit(name string, limit int64) error {
	b.calls++
	conf := b.Configured(name).Spec().Limit
	lo := max(1, int64(math.Ceil(b.floor*float64(conf)-1e-9)))
	if limit != 0 && (limit < lo || limit > conf) {
		b.t.Errorf("SetLimit(%s, %d) of a configured %d with Floor %v: want 0 or in [%d, %d]", name, limit, conf, b.floor, lo, conf)
	}
	return b.Middleware.SetLimit(name, limit)
}

// TestControllerLimitsWithinBounds: whatever the thresholds, the
// configured limits (1 to algorithms.MaxLimit) and the sequence of slow,
// failing and healthy periods, every limit set is within Floor (rounded
// up, at least 1) and the configured limit, never 0 but for "the
// configured one", and Level stays within [Floor, 1].
func TestControllerLimitsWithinBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	limits := []int64{1, 2, 3, 7, 100, 999_999_999, algorithms.MaxLimit}
	for range 40 {
		cfg := adaptive.Config{
			Baseline:      time.Millisecond,
			Floor:         float64(1+rng.IntN(1000)) / 1000,
			Decrease:      float64(1+rng.IntN(999)) / 1000,
			Step:          float64(1+rng.IntN(100)) / 1000,
			StablePeriods: 1 + rng.IntN(3),
		}
		b := &boundsTarget{Middleware: newMiddleware(t, limits...), t: t, floor: cfg.Floor}
		c, clock := newController(t, b, cfg)
		for range 60 {
			switch rng.IntN(4) {
			case 0, 1:
				period(t, c, clock, 100, 10, 10*time.Millisecond) // slow and failing
			case 2:
				period(t, c, clock, 100, 0, time.Millisecond) // healthy
			default:
				clock.Advance(time.Duration(rng.Int64N(int64(100 * time.Hour))))
				c.Evaluate() // idle periods
			}
			if l := c.Level(); l < cfg.Floor-1e-9 || l > 1 {
				t.Fatalf("%+v: level %v outside [Floor, 1]", cfg, l)
			}
		}
		if b.calls == 0 {
			t.Fatalf("%+v: no limit set", cfg)
		}
	}
}
