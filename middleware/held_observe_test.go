package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// holdRecorder is an Observer that keeps, of each Event, its policies,
// outcome, latency and hold, as "policies outcome latency held/not-held",
// and "(fallback)" when the fallback store decided.
type holdRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (o *holdRecorder) ObserveRequest(e middleware.Event) {
	var names []string
	for i := range e.Result.Len() {
		names = append(names, e.Result.Policy(i).Name())
	}
	held := "not-held"
	if d, ok := e.Held(); ok {
		held = "held=" + d.String()
	} else if d != 0 {
		held = "not-held=" + d.String() // never: 0 when not held
	}
	if e.Result.Fallback() {
		held += " (fallback)"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, fmt.Sprintf("%s %s latency=%s %s", strings.Join(names, ","), e.Outcome, e.Latency, held))
}

func (o *holdRecorder) ObserveState(from, to middleware.State)      {}
func (o *holdRecorder) ObserveLimit(name string, limit, conf int64) {}

func (o *holdRecorder) events() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// TestEventHeld: Event.Held reports how long the middleware held a request
// for its leaky_queue turn, on its clock, through a ServeMux with the
// memory store: the whole Delay for one served after it; the time held
// until then for a hold cut short (the client gone, a deadline run out
// during the hold), shorter than the Delay; a hold the clock measured as
// nothing (an instant wait) or as less (the clock set back) as 0, still
// held. A request not held reports (0, false): one admitted at once, one
// refused at once because its deadline comes before its turn, one shadow
// mode lets through at once though the queue gave it a Delay. The
// decision's Latency leaves the hold out throughout (the clock moves only
// during the hold).
func TestEventHeld(t *testing.T) {
	first := "queue,per-ip allowed latency=0s not-held" // departs at once
	for _, tt := range []struct {
		name string
		// wait holds the second request (d is 10 s); leave ends its
		// context.
		wait     func(clock *algotest.Clock, leave context.CancelFunc, ctx context.Context, d time.Duration) error
		deadline bool // the second request's context ends in 1 s, before its turn
		shadow   bool
		code     int
		want     string
	}{
		{"served", func(clock *algotest.Clock, _ context.CancelFunc, _ context.Context, d time.Duration) error {
			clock.Advance(d)
			return nil
		}, false, false, http.StatusOK, "queue,per-ip allowed latency=0s held=10s"},
		{"client left", func(clock *algotest.Clock, leave context.CancelFunc, ctx context.Context, d time.Duration) error {
			clock.Advance(3 * time.Second)
			leave()
			<-ctx.Done()
			return ctx.Err()
		}, false, false, http.StatusServiceUnavailable, "queue,per-ip abandoned latency=0s held=3s"},
		{"deadline during the hold", func(clock *algotest.Clock, _ context.CancelFunc, _ context.Context, d time.Duration) error {
			clock.Advance(4 * time.Second)
			return context.DeadlineExceeded
		}, false, false, http.StatusServiceUnavailable, "queue,per-ip abandoned latency=0s held=4s"},
		{"instant", func(*algotest.Clock, context.CancelFunc, context.Context, time.Duration) error {
			return nil
		}, false, false, http.StatusOK, "queue,per-ip allowed latency=0s held=0s"},
		{"clock set back", func(clock *algotest.Clock, _ context.CancelFunc, _ context.Context, d time.Duration) error {
			clock.Advance(-5 * time.Second)
			return nil
		}, false, false, http.StatusOK, "queue,per-ip allowed latency=0s held=0s"},
		{"deadline before its turn", nil, true, false, http.StatusServiceUnavailable, "queue,per-ip abandoned latency=0s not-held"},
		{"shadow", nil, false, true, http.StatusOK, "queue,per-ip allowed latency=0s not-held"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			rec := &holdRecorder{}
			ctx, leave := context.WithCancel(context.Background())
			defer leave()
			opts := []middleware.Option{middleware.WithObserver(rec), middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					if tt.wait == nil {
						t.Errorf("held for %s; want no hold", d)
						return nil
					}
					if d != 10*time.Second {
						t.Errorf("held for %s, want 10s", d)
					}
					return tt.wait(clock, leave, ctx, d)
				})}
			if tt.shadow {
				opts = append(opts, middleware.WithShadow(nil))
			}
			m := middleware.MustNew(store, []*policy.Policy{queue10s(), fixed("per-ip", 100, time.Minute, remote)}, opts...)
			mux := http.NewServeMux()
			mux.Handle("GET /", ok)
			h := m.Handler(mux)
			if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
				t.Fatalf("first request: %d", w.Code)
			}
			if tt.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Second)
				defer cancel()
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			if w.Code != tt.code {
				t.Errorf("second request: %d, want %d", w.Code, tt.code)
			}
			if got, want := strings.Join(rec.events(), "\n"), first+"\n"+tt.want; got != want {
				t.Errorf("events:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestEventHeldNested: of two middlewares nested that each hold a
// request (an outer queue of one per 10 s, an inner one of one per 30 s),
// the Event of each reports its own hold alone: the second request is
// held 10 s by the outer one, then, arriving 10 s later, 20 s by the inner
// one. A middleware further out that held nothing reports no hold.
func TestEventHeldNested(t *testing.T) {
	store, clock := newStore(t)
	rec := &holdRecorder{}
	global := middleware.MustNew(store, []*policy.Policy{fixed("global", 100, time.Minute, remote)},
		middleware.WithObserver(rec), middleware.WithClock(clock))
	outer := middleware.MustNew(store, []*policy.Policy{queueEvery("outer", 10*time.Second)},
		middleware.WithObserver(rec), middleware.WithClock(clock), advancing(clock))
	inner := middleware.MustNew(store, []*policy.Policy{queueEvery("inner", 30*time.Second)},
		middleware.WithObserver(rec), middleware.WithClock(clock), advancing(clock))
	mux := http.NewServeMux()
	mux.Handle("GET /", inner.Handler(ok))
	h := global.Handler(outer.Handler(mux))
	for i := range 2 {
		if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	want := []string{
		"global allowed latency=0s not-held",
		"outer allowed latency=0s not-held",
		"inner allowed latency=0s not-held",
		"global allowed latency=0s not-held",
		"outer allowed latency=0s held=10s",
		"inner allowed latency=0s held=20s",
	}
	if got := rec.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAllocationsObservedHeld: the hold an Event reports costs a held
// request no allocation: with an observer it allocates no more than
// without one. Each request is held 10 s (the wait advances the clock by
// its Delay, so that the queue never fills).
func TestAllocationsObservedHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	build := func(opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
		store, clock := newStore(t)
		opts = append(opts, middleware.WithClock(clock), advancing(clock))
		m := middleware.MustNew(store, []*policy.Policy{queue10s()}, opts...)
		return m.Handler(ok), m
	}
	plain, pm := build()
	obs := &nopObserver{}
	observed, om := build(middleware.WithObserver(obs))
	for range 2 { // the second is held
		serve(plain, "GET", "/")
		serve(observed, "GET", "/")
	}
	a := allocsPerRequest(plain)
	b := allocsPerRequest(observed)
	if b > a {
		t.Errorf("a held request: %v allocations with an observer, %v without", b, a)
	}
	if p, o := pm.Stats().Delayed, om.Stats().Delayed; p < 200 || o < 200 {
		t.Errorf("requests held: %d without the observer, %d with it; want every one but the first", p, o)
	}
}

// TestEventHeldOtherPaths: the other ways a request reaches the hold
// report it as well: decided by the fallback store while the store is down
// (its leaky_queue holds the second request 10 s), and by a middleware
// built WithoutContext (which passes the request on as it came).
func TestEventHeldOtherPaths(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts func(t *testing.T) ([]middleware.Option, func(*switchable))
		want string
	}{
		{"fallback", func(t *testing.T) ([]middleware.Option, func(*switchable)) {
			fb, _ := newStore(t)
			return []middleware.Option{middleware.OnStoreError(middleware.FallBack(fb)), middleware.WithBreaker(0, 0)},
				func(s *switchable) { s.down.Store(true) }
		}, "queue allowed latency=0s held=10s (fallback)"},
		{"without context", func(*testing.T) ([]middleware.Option, func(*switchable)) {
			return []middleware.Option{middleware.WithoutContext()}, func(*switchable) {}
		}, "queue allowed latency=0s held=10s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem, clock := newStore(t)
			store := &switchable{Store: mem}
			rec := &holdRecorder{}
			opts, prepare := tt.opts(t)
			opts = append(opts, middleware.WithObserver(rec), middleware.WithClock(clock), advancing(clock))
			m := middleware.MustNew(store, []*policy.Policy{queue10s()}, opts...)
			prepare(store)
			mux := http.NewServeMux()
			mux.Handle("GET /", ok)
			h := m.Handler(mux)
			for i := range 2 {
				if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
					t.Fatalf("request %d: %d", i+1, w.Code)
				}
			}
			if got := rec.events(); len(got) != 2 || got[1] != tt.want {
				t.Errorf("events %q; want the second %q", got, tt.want)
			}
			if got := m.Stats().Delayed; got != 1 {
				t.Errorf("Stats().Delayed = %d, want 1", got)
			}
		})
	}
}
