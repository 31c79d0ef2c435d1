package adaptive

import (
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWindowsKeepEveryRequest: requests observed from several goroutines
// while the clock moves on and evaluations judge the periods that ended
// are each counted once, in a window of the list (periods in order, not
// overlapping), and every window whose period ended is sealed (judged)
// after the last evaluation; each counted over the threshold (all are),
// also in the windows the requests made before the period before them
// was judged (provisional, then settled).
func TestWindowsKeepEveryRequest(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	c := newInternalController(t, Config{Clock: clock, Period: time.Second, MinSamples: 1, Baseline: time.Millisecond})
	first := c.win.Load()
	const goroutines, each = 4, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				// All over the threshold of 2 ms.
				c.Observe(time.Duration(3+i%7)*time.Millisecond, 200+303*((i+g)%50/49))
			}
		})
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		for {
			select {
			case <-stop:
				return
			default:
			}
			clock.Advance(97 * time.Millisecond)
			if err := c.Evaluate(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-ticked
	clock.Advance(time.Second)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	var n int64
	var prev *window
	for w := first; w != nil; w = w.next.Load() {
		n += w.n.Load()
		if w.over.Load() != w.n.Load() || w.prov.Load() {
			t.Errorf("window [%v, %v): %d requests over the threshold of %d (provisional %v), want all", w.from, w.until, w.over.Load(), w.n.Load(), w.prov.Load())
		}
		if prev != nil && w.from.Before(prev.until) {
			t.Errorf("window [%v, %v) after [%v, %v)", w.from, w.until, prev.from, prev.until)
		}
		if st := w.state.Load(); !now.Before(w.until) && st != sealed {
			t.Errorf("window [%v, %v) ended by %v: state %#x, want sealed with none counting", w.from, w.until, now, st)
		}
		prev = w
	}
	if n != goroutines*each {
		t.Errorf("%d requests counted in the windows, want %d", n, goroutines*each)
	}
	if prev != c.win.Load() {
		t.Errorf("the last window is not the period in course")
	}
}

// newInternalController returns a Controller with cfg of a middleware of
// one policy, 100 a minute per IP, on a memory store reading cfg.Clock
// (closed when the test ends).
func newInternalController(t *testing.T, cfg Config) *Controller {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(cfg.Clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, keyfunc.Must(keyfunc.IP())))})
	c, err := New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
