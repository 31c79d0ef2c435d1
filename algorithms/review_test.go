package algorithms_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// reviewExtremeSpec returns a valid spec of kind k at the edges of the
// allowed range: limits near 1 or MaxLimit, windows of 1 ms or 24 h, bursts
// that take up to 24 h to refill.
func reviewExtremeSpec(r *rand.Rand, k algorithms.Kind) algorithms.Spec {
	limits := []int64{1, 2, 3, 7, 1000, algorithms.MaxLimit - 1, algorithms.MaxLimit}
	windows := []time.Duration{algorithms.MinWindow, time.Second, 7*time.Hour + 1, algorithms.MaxWindow - 1, algorithms.MaxWindow}
	for {
		s := algorithms.Spec{Algorithm: k, Limit: limits[r.IntN(len(limits))], Window: windows[r.IntN(len(windows))]}
		switch k {
		case algorithms.TokenBucket, algorithms.LeakyBucket:
			switch r.IntN(3) {
			case 1:
				s.Burst = 1 + r.Int64N(s.Limit)
			case 2: // as large as 24 h of refill allows
				s.Burst = min(algorithms.MaxLimit, int64(algorithms.MaxWindow)/int64(s.Window)*s.Limit)
			}
		case algorithms.SlidingBuckets:
			s.Buckets = []int{1, 2, 3, 4, 5}[r.IntN(5)]
		case algorithms.LeakyQueue:
			s.MaxDelay = time.Duration(r.Int64N(int64(s.Window) + 1))
		}
		if s.Validate() == nil {
			return s
		}
	}
}

// Single checks (TakeOne, with its 64-bit fast paths) and pairs (Take)
// decide exactly as the model does on specs at the edges of the allowed
// range, with costs up to the capacity and instants that go back by up to
// two windows.
func TestReviewExtremeSpecsAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	trials := 140
	if testing.Short() {
		trials = 50
	}
	for trial := range trials {
		k := algorithms.Kinds[trial%len(algorithms.Kinds)]
		spec := reviewExtremeSpec(r, k)
		clk := algotest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
		s := newMemoryStore(t, algorithms.WithClock(clk))
		m := algotest.NewModel()
		w := int64(spec.Window)
		capy := spec.Capacity()
		keys := []string{"a", "b"}
		for step := range 40 {
			switch g := r.IntN(10); {
			case g < 2:
			case g < 3:
				clk.Advance(1)
			case g < 5:
				clk.Advance(time.Duration(1 + r.Int64N(max(w/spec.Limit, 1)*3)))
			case g < 7:
				clk.Advance(time.Duration(r.Int64N(w)))
			case g < 8:
				clk.Advance(time.Duration(w + r.Int64N(2*w)))
			default:
				clk.Advance(-time.Duration(1 + r.Int64N(2*w)))
			}
			cost := []int64{0, 1, 2, capy, capy - 1, 1 + r.Int64N(capy)}[r.IntN(6)]
			cost = min(max(cost, 0), capy)
			checks := []algorithms.Check{{Spec: spec, Key: keys[r.IntN(2)], Cost: cost}}
			if r.IntN(6) == 0 {
				checks = append(checks, algorithms.Check{Spec: spec, Key: keys[r.IntN(2)], Cost: min(cost, 1)})
			}
			if verr := algorithms.ValidateChecks(checks); verr != nil {
				// One key twice, past what it ever admits at once: the
				// store's error and the Model's, consuming nothing.
				_, serr := s.Take(ctx, checks...)
				_, merr := m.TakeAt(clk.Now(), checks...)
				if serr == nil || merr == nil || serr.Error() != verr.Error() || merr.Error() != verr.Error() {
					t.Fatalf("trial %d step %d, spec %v, checks %+v: store error %v, model error %v, want %v", trial, step, spec, checks, serr, merr, verr)
				}
				continue
			}
			var got []algorithms.Decision
			if len(checks) == 1 {
				d, err := s.TakeOne(ctx, checks[0])
				if err != nil {
					t.Fatal(err)
				}
				got = []algorithms.Decision{d}
			} else {
				var err error
				if got, err = s.Take(ctx, checks...); err != nil {
					t.Fatal(err)
				}
			}
			want, err := m.TakeAt(clk.Now(), checks...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("trial %d step %d, spec %v, checks %+v:\ncheck %d: store %+v\n         model %+v", trial, step, spec, checks, i, got[i], want[i])
				}
			}
		}
	}
}

// Goroutines that each bring new specs into the shards (single checks find
// the tables without the lock) while others take pairs and sweep never
// admit more than a spec's limit for a key.
func TestReviewConcurrentNewSpecsNeverOverAdmit(t *testing.T) {
	clk := algotest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	s := newMemoryStore(t, algorithms.WithClock(clk))
	const specs, goroutines, rounds = 16, 4, 60
	var admitted [specs][2]atomic.Int64
	spec := func(i int) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.Kinds[i%len(algorithms.Kinds)], Limit: int64(20 + i), Window: time.Hour, Buckets: map[bool]int{true: 4}[algorithms.Kinds[i%len(algorithms.Kinds)] == algorithms.SlidingBuckets]}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				i := (r*7 + g) % specs
				k := (r + g) % 2
				c := algorithms.Check{Spec: spec(i), Key: strconv.Itoa(k)}
				if g%2 == 0 {
					d, err := s.TakeOne(ctx, c)
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted[i][k].Add(1)
					}
				} else {
					ds, err := s.Take(ctx, c, algorithms.Check{Spec: spec(i), Key: "other"})
					if err != nil {
						t.Error(err)
						return
					}
					if ds[0].Allowed && ds[1].Allowed {
						admitted[i][k].Add(1)
					}
					s.Sweep()
					_ = s.Len()
				}
			}
		})
	}
	wg.Wait()
	for i := range specs {
		sp := spec(i)
		for k := range 2 {
			n := admitted[i][k].Load()
			// The queue admits up to its capacity, then as it drains: none drains here.
			if n > sp.Capacity() {
				t.Errorf("spec %v key %d: %d admitted, over the capacity %d", sp, k, n, sp.Capacity())
			}
			// A final check agrees with what was admitted.
			d, err := s.TakeOne(ctx, algorithms.Check{Spec: sp, Key: strconv.Itoa(k)})
			if err != nil {
				t.Fatal(err)
			}
			if sp.Algorithm != algorithms.LeakyQueue && d.Allowed != (n < sp.Capacity()) {
				t.Errorf("spec %v key %d: after %d admitted, a check is %+v", sp, k, n, d)
			}
		}
	}
}
