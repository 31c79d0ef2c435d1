package middleware_test

import (
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// admittedOf returns how many of n requests h admits.
func admittedOf(h http.Handler, n int) int {
	a := 0
	for range n {
		if serve(h, "GET", "/").Code == http.StatusOK {
			a++
		}
	}
	return a
}

// TestReloadCarrySetLimitBack: SetLimit promises that, within one window,
// a client never gets more than the configured limit however the limit
// moves, and that going back to the configured limit finds its counters
// holding every request counted meanwhile. A policy reloaded tighter
// (10 to 5 a minute) and then lowered by SetLimit (to 2) during the
// reload's guard must count those requests under its configured Spec
// too: a client that used 2 gets 3 more when the limit is restored, not
// a fresh 5. (It did, when a policy had one guard: the replaced Spec's.)
func TestReloadCarrySetLimitBack(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	clock.Advance(10 * time.Second)
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLimit("p", 2); err != nil {
		t.Fatal(err)
	}
	if got := admittedOf(mux, 3); got != 2 {
		t.Fatalf("at 2: %d of 3 admitted", got)
	}
	if err := m.SetLimit("p", 0); err != nil {
		t.Fatal(err)
	}
	if got := admittedOf(mux, 6); got != 3 {
		t.Errorf("back at the configured 5 in the same minute, 2 used: %d of 6 admitted, want 3", got)
	}
}

// TestReloadCarryNestedCountsOnce: one policy set given to two nested
// middlewares counts a request once (ErrCountedTwice); reloading both
// tighter must not make the inner one count it again while the reload's
// guard runs (each middleware guards its own copy of the policy).
func TestReloadCarryNestedCountsOnce(t *testing.T) {
	store, clock := newStore(t)
	before := []*policy.Policy{fixed("p", 10, time.Minute, remote)}
	outer := middleware.MustNew(store, before, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}))
	inner := middleware.MustNew(store, before, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}))
	mux := http.NewServeMux()
	mux.Handle("/", outer.Handler(inner.Handler(ok)))
	if got := admittedOf(mux, 11); got != 10 {
		t.Fatalf("before the reload: %d of 11 admitted, want 10 (counted once)", got)
	}
	after := []*policy.Policy{fixed("p", 5, time.Minute, remote)}
	for _, m := range []*middleware.Middleware{outer, inner} {
		if err := m.SetPolicies(after); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute) // the next minute, the guard still on
	if got := admittedOf(mux, 6); got != 5 {
		t.Errorf("reloaded at 5, next minute: %d of 6 admitted, want 5 (counted once)", got)
	}
}

// TestReloadCarryRace: requests ending reloads' guards (endCarries, under
// TryLock) while SetLimit and SetPolicies write the rules, for the race
// detector; the guard is gone once its time is over.
func TestReloadCarryRace(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	var wg sync.WaitGroup
	var served atomic.Int64
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					serve(mux, "GET", "/")
					served.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a writer other than the reloads
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				if err := m.SetLimit("p", int64(i%3)); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	for range 20 {
		for _, lim := range []int64{10, 5} { // a guard for two minutes
			if err := m.SetPolicies([]*policy.Policy{fixed("p", lim, time.Minute, remote)}); err != nil {
				t.Error(err)
			}
		}
		for range 6 { // past its end, under the requests
			clock.Advance(25 * time.Second)
			for n := served.Load() + 8; served.Load() < n; {
				runtime.Gosched() // let requests run at this instant
			}
		}
	}
	close(stop)
	wg.Wait()
	clock.Advance(3 * time.Minute)
	serve(mux, "GET", "/")
	if g, ok := m.Set().Policy(0).Guard(); ok && g.Limit != m.Configured("p").Spec().Limit {
		t.Errorf("after every guard's time: guarded by %+v", g)
	}
}

// TestReloadTighterTwice: a limit lowered by two reloads within one
// window (10, then 5, then 3 a minute, an operator tightening again)
// hands a client that used its 10 no fresh quota either: the Spec the
// first reload replaced holds its requests, and those counted since
// under its guard, which the Spec in between does not.
func TestReloadTighterTwice(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	clock.Advance(10 * time.Second)
	if got := admittedOf(mux, 10); got != 10 {
		t.Fatalf("at 10 a minute: %d of 10 admitted", got)
	}
	for _, lim := range []int64{5, 3} {
		if err := m.SetPolicies([]*policy.Policy{fixed("p", lim, time.Minute, remote)}); err != nil {
			t.Fatal(err)
		}
		if got := admittedOf(mux, 1); got != 0 {
			t.Errorf("reloaded at %d, same minute, 10 used: %d of 1 admitted, want 0", lim, got)
		}
	}
	clock.Advance(50 * time.Second) // the next minute
	if got := admittedOf(mux, 4); got != 3 {
		t.Errorf("next minute at 3: %d of 4 admitted, want 3", got)
	}
}
