package replay

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A trialRun replays one policy's decisions alone under another Spec: a
// candidate limit, or another algorithm. It sees only the requests the
// policy decided in the replay (applicable, with a key), each at its time
// and in the order the replay decided them (a line logged late, after
// later ones of its key, is decided at its key's newest instant, as in the
// replay), and decides each in a store of the run it was decided in: a run
// of late lines decided apart in the replay (see Engine.lateRun) is
// decided apart in the trial too, so that a lone policy's trial at its
// configured Spec rejects what the replay did.
type trialRun struct {
	ps   *polStats
	spec algorithms.Spec
	tl   *timeline // nil: no per-bin counts

	rejected int64
	series   Series
	err      error
}

func (tr *trialRun) run() {
	clk := &clock{} // every store's: one event at a time
	var stores [maxRuns + 1]*algorithms.MemoryStore
	defer func() {
		for _, s := range stores {
			if s != nil {
				s.Close()
			}
		}
	}()
	if tr.tl != nil {
		tr.series = tr.tl.newSeries("")
	}
	ctx := context.Background()
	check := algorithms.Check{Spec: tr.spec, Cost: 1}
	for _, ev := range tr.ps.events {
		store := stores[ev.run]
		if store == nil {
			var err error
			if store, err = algorithms.NewMemoryStore(algorithms.WithClock(clk)); err != nil {
				tr.err = err
				return
			}
			stores[ev.run] = store
		}
		clk.t = unixNano(ev.t)
		check.Key = tr.ps.names[ev.key]
		d, err := store.TakeOne(ctx, check)
		if err != nil {
			tr.err = fmt.Errorf("replay: %s under %v: %w", tr.ps.policy.Name(), tr.spec, err)
			return
		}
		if !d.Allowed {
			tr.rejected++
		} else if ev.uncounted {
			// A response the policy does not count: given back, as in
			// the replay itself.
			checks, ds := [1]algorithms.Check{check}, [1]algorithms.Decision{d}
			var out [1]algorithms.Refunded
			if err := store.GiveBack(ctx, out[:], checks[:], ds[:], 0); err != nil {
				tr.err = fmt.Errorf("replay: %s under %v: %w", tr.ps.policy.Name(), tr.spec, err)
				return
			}
		}
		if tr.tl != nil {
			tr.series.add(tr.tl, ev.t, !d.Allowed)
		}
	}
}

// runAll runs the trials on every CPU.
func runAll(trials []*trialRun) error {
	work := make(chan *trialRun)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tr := range work {
				tr.run()
			}
		}()
	}
	for _, tr := range trials {
		work <- tr
	}
	close(work)
	wg.Wait()
	for _, tr := range trials {
		if tr.err != nil {
			return tr.err
		}
	}
	return nil
}

// withLimit returns spec with its limit set to limit; a bucket's burst is
// scaled alike (rounded up), so the trial keeps the policy's shape.
func withLimit(spec algorithms.Spec, limit int64) algorithms.Spec {
	if spec.Burst != 0 {
		spec.Burst = max(1, min(algorithms.MaxLimit, (spec.Burst*limit+spec.Limit-1)/spec.Limit))
	}
	spec.Limit = limit
	return spec
}

// compareSpecs returns spec under every algorithm but leaky_queue (a
// shaper: it delays rather than rejects): same limit and window, default
// burst, and for sliding_buckets the policy's buckets or 10.
func compareSpecs(spec algorithms.Spec) []algorithms.Spec {
	var out []algorithms.Spec
	for _, k := range algorithms.Kinds {
		if k == algorithms.LeakyQueue {
			continue
		}
		s := algorithms.Spec{Algorithm: k, Limit: spec.Limit, Window: spec.Window}
		if k == algorithms.SlidingBuckets {
			s.Buckets = spec.Buckets
			if s.Buckets == 0 {
				s.Buckets = 10
			}
		}
		if s.Validate() == nil {
			out = append(out, s)
		}
	}
	return out
}
