package algotest

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// phaseSpecs returns, for each kind, a spec with a small capacity on a one
// second scale (so that the phases of runConcurrentPhases refill, roll and
// prune it) and a second spec of another kind that it is stacked with.
func phaseSpecs() [][2]algorithms.Spec {
	s := time.Second
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 40, Window: s},
		{Algorithm: algorithms.SlidingLog, Limit: 40, Window: s},
		{Algorithm: algorithms.SlidingWindow, Limit: 40, Window: s},
		{Algorithm: algorithms.SlidingBuckets, Limit: 40, Window: s, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 30, Window: s, Burst: 45},
		{Algorithm: algorithms.LeakyBucket, Limit: 30, Window: s, Burst: 45},
		{Algorithm: algorithms.LeakyQueue, Limit: 40, Window: s, MaxDelay: 700 * time.Millisecond},
	}
	out := make([][2]algorithms.Spec, len(specs))
	for i, sp := range specs {
		out[i] = [2]algorithms.Spec{sp, specs[(i+3)%len(specs)]}
	}
	return out
}

// runConcurrentPhases: for every kind, 64 goroutines make two identical
// calls each at one frozen instant; then the clock moves (by nothing, by a
// nanosecond, by the last RetryAfter, by a third of a window, onto the next
// window boundary, a whole window, or back by a quarter of one) and they do
// it again, with calls of one check of cost 1 or 2, one key twice, or two
// specs stacked on one key. Calls that are all alike at one instant decide
// the same in any order, so the multiset of their decisions (every field)
// must be exactly the Model's for the same 128 calls made one after the
// other: never one admitted more (or fewer), while the key's state rolls,
// refills and goes back between phases.
func runConcurrentPhases(t *testing.T, h Harness) {
	const calls = 2
	for _, pair := range phaseSpecs() {
		spec, other := pair[0], pair[1]
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			clock := NewClock(Base.Add(333 * time.Millisecond))
			store := h.New(t, clock)
			model := NewModel()
			w := spec.Window
			var retry time.Duration
			for phase := range 14 {
				var d time.Duration
				switch phase % 7 {
				case 1:
					d = 1
				case 2:
					d = retry
				case 3:
					d = w / 3
				case 4:
					now := clock.Now().UnixNano()
					d = time.Duration((floorDiv(now, int64(w))+1)*int64(w) - now)
				case 5:
					d = -w / 4
				case 6:
					d = w
				}
				now := clock.Advance(d)
				k := algorithms.Check{Spec: spec, Key: "hot"}
				var checks []algorithms.Check
				switch phase % 4 {
				case 0:
					checks = []algorithms.Check{k}
				case 1:
					k.Cost = 2
					checks = []algorithms.Check{k}
				case 2:
					checks = []algorithms.Check{k, k}
				case 3:
					checks = []algorithms.Check{k, {Spec: other, Key: "hot"}}
				}
				got := concurrentDecisions(t, store, goroutines, calls, checks)
				var want [][]algorithms.Decision
				for range goroutines * calls {
					ds, err := model.TakeAt(now, checks...)
					if err != nil {
						t.Fatalf("model: %v", err)
					}
					want = append(want, ds)
					if !ds[0].Allowed {
						retry = ds[0].RetryAfter
					}
				}
				sortDecisions(got)
				sortDecisions(want)
				for i := range want {
					if !slices.Equal(got[i], want[i]) {
						t.Fatalf("phase %d at %s (+%v): %d goroutines × %d calls of Take(%s): the %dth decision, in order, is\n\t%+v\nwant\n\t%+v\n(admitted %d, want %d)",
							phase, now.Format(time.RFC3339Nano), d, goroutines, calls, formatChecks(checks), i, got[i], want[i], admittedCount(got), admittedCount(want))
					}
				}
			}
		})
	}
}

// concurrentDecisions runs g goroutines making n calls each of checks at
// the clock's frozen instant and returns the decisions of every call.
func concurrentDecisions(t *testing.T, store algorithms.Store, g, n int, checks []algorithms.Check) [][]algorithms.Decision {
	t.Helper()
	var (
		mu       sync.Mutex
		out      [][]algorithms.Decision
		firstErr error
		wg       sync.WaitGroup
	)
	for range g {
		wg.Go(func() {
			for range n {
				ds, err := store.Take(t.Context(), checks...)
				mu.Lock()
				switch {
				case err != nil:
					firstErr = cmp.Or(firstErr, err)
				case len(ds) != len(checks):
					firstErr = cmp.Or(firstErr, fmt.Errorf("%d decisions for %d checks", len(ds), len(checks)))
				default:
					out = append(out, ds)
				}
				mu.Unlock()
			}
		})
	}
	waitOrDeadlock(t, &wg, "concurrent Takes")
	if firstErr != nil {
		t.Fatalf("concurrent Take(%s): %v", formatChecks(checks), firstErr)
	}
	return out
}

// sortDecisions orders calls' decisions: admitted calls first, by
// decreasing Remaining of their checks, then by Delay.
func sortDecisions(ds [][]algorithms.Decision) {
	slices.SortFunc(ds, func(a, b []algorithms.Decision) int {
		for i := range min(len(a), len(b)) {
			x, y := a[i], b[i]
			if c := cmp.Compare(boolInt(y.Allowed), boolInt(x.Allowed)); c != 0 {
				return c
			}
			if c := cmp.Compare(y.Remaining, x.Remaining); c != 0 {
				return c
			}
			if c := cmp.Compare(x.Delay, y.Delay); c != 0 {
				return c
			}
			if c := cmp.Compare(x.NextAfter, y.NextAfter); c != 0 {
				return c
			}
			if c := cmp.Compare(x.ResetAfter, y.ResetAfter); c != 0 {
				return c
			}
			if c := cmp.Compare(x.RetryAfter, y.RetryAfter); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a), len(b))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func admittedCount(ds [][]algorithms.Decision) int {
	n := 0
	for _, d := range ds {
		if allAllowed(d) {
			n++
		}
	}
	return n
}
