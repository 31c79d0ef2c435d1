package middleware_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stateCounter is a CloseObserver that counts, per State, the transitions
// into it less those out of it, as the metrics packages do, a Close
// counting its middleware out; and the Closes it is told.
type stateCounter struct {
	mu      sync.Mutex
	in      [len(middleware.States)]int
	closes  []middleware.State
	changes int
}

func (c *stateCounter) ObserveRequest(middleware.Event)   {}
func (c *stateCounter) ObserveLimit(string, int64, int64) {}

func (c *stateCounter) ObserveState(from, to middleware.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in[from]--
	c.in[to]++
	c.changes++
}

func (c *stateCounter) ObserveClose(last middleware.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in[last]--
	c.in[middleware.StateHealthy]++
	c.closes = append(c.closes, last)
}

// failing reports the middlewares counted in a failure State.
func (c *stateCounter) failing() [len(middleware.States)]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.in
	v[middleware.StateHealthy] = 0
	return v
}

// alternating fails every other Take.
type alternating struct {
	algorithms.Store
	n atomic.Int64
}

func (f *alternating) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if f.n.Add(1)%2 == 0 {
		return nil, errDown
	}
	return f.Store.Take(ctx, checks...)
}

// TestCloseCountsTheMiddlewareOut: a Middleware is an io.Closer. Closed
// while failing open, it tells each CloseObserver among its observers the
// State it is in, once (a second Close tells nothing); an observer that is
// not a CloseObserver is told nothing. After Close, its changes of State
// reach no observer, while State still reports them.
func TestCloseCountsTheMiddlewareOut(t *testing.T) {
	store, _ := newStore(t)
	st := &switchable{Store: store}
	counter := &stateCounter{}
	plain := &recorder{}
	m := middleware.MustNew(st, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithObserver(plain, counter), middleware.WithBreaker(0, 0))
	var _ io.Closer = m
	h := m.Handler(ok)
	st.down.Store(true)
	serve(h, "GET", "/")
	if got := counter.failing(); got[middleware.StateFailingOpen] != 1 {
		t.Fatalf("failing open: counted %v, want 1 open", got)
	}
	for range 2 {
		if err := m.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
	}
	if got := counter.failing(); got != [len(middleware.States)]int{} {
		t.Errorf("closed: counted %v failing, want none", got)
	}
	if len(counter.closes) != 1 || counter.closes[0] != middleware.StateFailingOpen {
		t.Errorf("ObserveClose calls %v, want one, with open", counter.closes)
	}
	st.down.Store(false)
	serve(h, "GET", "/")
	st.down.Store(true)
	serve(h, "GET", "/")
	if counter.changes != 1 || len(plain.states) != 1 {
		t.Errorf("changes told after Close: counter %d, plain %v; want only the one before", counter.changes, plain.states)
	}
	if m.State() != middleware.StateFailingOpen {
		t.Errorf("State() = %v after Close, want open", m.State())
	}
}

// TestCloseRacingFailures: Close while concurrent requests move the
// middleware between healthy and failing: whatever the interleaving, the
// observer's count ends with the middleware counted in no failure State
// (every change it was told before the Close is undone by the Close, and
// none comes after).
func TestCloseRacingFailures(t *testing.T) {
	for round := range 20 {
		store, _ := newStore(t)
		counter := &stateCounter{}
		m := middleware.MustNew(&alternating{Store: store}, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)},
			middleware.WithObserver(counter), middleware.WithBreaker(0, 0))
		h := m.Handler(ok)
		var wg sync.WaitGroup
		var served atomic.Int64
		half := make(chan struct{}) // closed when 100 of the 200 requests are served
		for range 4 {
			wg.Go(func() {
				for range 50 {
					serve(h, "GET", "/")
					if served.Add(1) == 100 {
						close(half)
					}
				}
			})
		}
		wg.Go(func() {
			<-half
			m.Close()
		})
		wg.Wait()
		if got := counter.failing(); got != [len(middleware.States)]int{} {
			t.Fatalf("round %d: counted %v failing after Close, want none (changes told %d, closes %v)", round, got, counter.changes, counter.closes)
		}
	}
}
