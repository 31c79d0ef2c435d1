package algorithms_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestReviewSweepChangesNoDecisionOfAKeyItKeeps: a sweep drops only idle
// keys, "whose state no longer changes any decision", and an eviction
// drops one key; a key they look at and keep must decide afterwards as it
// would have had they not looked, also at an instant before theirs (a call
// that read the clock before the sweep took the lock, or a host whose
// clock is behind: see "Time that goes back"). A sliding_log key with
// requests at 0 s and 5 s (limit 2 per 10 s) is not idle at 12 s; a
// request at 6 s must still see both and be denied, as the Model decides.
// Both looked at the log at 12 s and forgot the request of 0 s, so the
// request at 6 s was admitted: three requests within 10 s under a limit
// of 2.
func TestReviewSweepChangesNoDecisionOfAKeyItKeeps(t *testing.T) {
	logSpec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: 10 * time.Second}
	hourly := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	k := algorithms.Check{Spec: logSpec, Key: "k"}
	for _, how := range []string{"Sweep", "eviction"} {
		t.Run(how, func(t *testing.T) {
			clk := algotest.NewClock(epoch)
			opts := []algorithms.MemoryOption{algorithms.WithClock(clk)}
			if how == "eviction" {
				opts = append(opts, algorithms.WithMaxKeys(2)) // one shard of 2 keys
			}
			s := newMemoryStore(t, opts...)
			m := algotest.NewModel()
			at := func(d time.Duration) { clk.Set(epoch.Add(d)) }
			stepK := func(d time.Duration) algorithms.Decision {
				t.Helper()
				at(d)
				got := take(t, s, k)[0]
				want, err := m.TakeAt(epoch.Add(d), k)
				if err != nil {
					t.Fatal(err)
				}
				if got != want[0] {
					t.Fatalf("k at %v: store %+v, model %+v", d, got, want[0])
				}
				return got
			}
			stepK(0)
			stepK(5 * time.Second)
			at(12 * time.Second)
			if how == "Sweep" {
				if n := s.Sweep(); n != 0 {
					t.Fatalf("Sweep at 12 s dropped %d keys; none is idle", n)
				}
			} else {
				// j holds 1 of 10, k (at 12 s) 1 of 2: a new key evicts j,
				// having sampled both.
				at(0)
				take(t, s, algorithms.Check{Spec: hourly, Key: "j"})
				at(12 * time.Second)
				take(t, s, algorithms.Check{Spec: hourly, Key: "new"})
				if s.Len() != 2 {
					t.Fatalf("Len() = %d at the bound of 2", s.Len())
				}
			}
			if d := stepK(6 * time.Second); d.Allowed {
				t.Fatalf("request at 6 s admitted: %+v", d)
			}
		})
	}
}

// TestReviewSweepKeepsKeptKeysExactly: for random single-key histories of
// every kind on specs at the edges, with instants that go back, a store
// that sweeps every few calls decides every call exactly as one that never
// sweeps, except a call on a key a sweep dropped, at an instant before
// that sweep's (decided at the sweep's instant, as the package
// documentation says under "Time that goes back").
func TestReviewSweepKeepsKeptKeysExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 3))
	byKind := map[algorithms.Kind][]algorithms.Spec{}
	for _, s := range algotest.EdgeSpecs() {
		byKind[s.Algorithm] = append(byKind[s.Algorithm], s)
	}
	for _, k := range algorithms.Kinds {
		specs := byKind[k]
		for trial := range 40 {
			spec := specs[r.IntN(len(specs))]
			w := int64(spec.Window)
			capy := spec.Capacity()
			clk := algotest.NewClock(epoch.Add(time.Duration(r.Int64N(w))))
			swept := newMemoryStore(t, algorithms.WithClock(clk))
			plain := newMemoryStore(t, algorithms.WithClock(clk))
			var sweptAt time.Time
			dropped := false
			for step := range 40 {
				switch g := r.IntN(10); {
				case g < 2:
				case g < 5:
					clk.Advance(time.Duration(1 + r.Int64N(max(w/spec.Limit, 1)*3)))
				case g < 8:
					clk.Advance(time.Duration(r.Int64N(2 * w)))
				default:
					clk.Advance(-time.Duration(1 + r.Int64N(w)))
				}
				if r.IntN(4) == 0 {
					// A sweep a little ahead, then this call behind it.
					ahead := time.Duration(r.Int64N(w + 1))
					clk.Advance(ahead)
					if swept.Sweep() > 0 {
						dropped = true
					}
					if clk.Now().After(sweptAt) {
						sweptAt = clk.Now()
					}
					clk.Advance(-ahead)
				}
				c := algorithms.Check{Spec: spec, Key: "k", Cost: []int64{1, capy, 1 + r.Int64N(capy)}[r.IntN(3)]}
				a := take(t, swept, c)[0]
				b := take(t, plain, c)[0]
				if a != b && !(dropped && clk.Now().Before(sweptAt)) {
					t.Fatalf("%v trial %d step %d (cost %d): swept store %+v, unswept %+v", spec, trial, step, c.Cost, a, b)
				}
				if a != b {
					break // the histories part, by design
				}
			}
		}
	}
}
