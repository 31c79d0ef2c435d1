package middleware_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// scripted is a memory store whose next calls fail with the errors queued
// in fail (a nil one decides); a call whose context is done returns its
// context's error, as the stores of this module do. It counts its calls.
// It is a plain Store (not the memory store's faster interfaces, which
// would bypass Take).
type scripted struct {
	mem   *algorithms.MemoryStore
	mu    sync.Mutex
	calls int
	fail  []error
}

func (s *scripted) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.mu.Lock()
	s.calls++
	var err error
	if len(s.fail) > 0 {
		err, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return s.mem.Take(ctx, checks...)
}

// errWrongType is an error about one key's value, as the Redis store
// returns it (WRONGTYPE): Redis answered.
var errWrongType = fmt.Errorf("redisstore: take: WRONGTYPE Operation against a key holding the wrong kind of value: %w", algorithms.ErrKeyState)

// TestBreakerCountsOnlyBackendFailures: the circuit breaker (WithBreaker)
// opens after consecutive failures of the store's backend, and only of the
// backend: what a request brings on itself (no key, a cost out of range,
// its context done because its client went away or its deadline passed,
// a check the store calls invalid, a key whose stored value the store
// cannot use) must not open the circuit for every client. After each
// kind, repeated beyond the breaker's threshold of 2, a good request must
// still reach the store and be decided, the breaker closed.
func TestBreakerCountsOnlyBackendFailures(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), t0.Add(-time.Hour))
	defer cancel2()
	badCost := func(r *http.Request) int64 {
		if r.Header.Get("X-Cost") == "1000" {
			return 1000
		}
		return 1
	}
	for _, tt := range []struct {
		name   string
		fail   error           // the store's error, nil: it decides
		ctx    context.Context // the request's context
		header []string
		status int // of each such request
		store  bool
	}{
		// Pinned: these never reach the store.
		{name: "no key", header: nil, status: 400},
		{name: "cost out of range", header: []string{"X-User", "u", "X-Cost", "1000"}, status: 429},
		// These reach the store, which does not fail.
		{name: "client gone", ctx: cancelled, header: []string{"X-User", "u"}, status: 503, store: true},
		{name: "deadline passed", ctx: expired, header: []string{"X-User", "u"}, status: 503, store: true},
		{name: "key state", fail: errWrongType, header: []string{"X-User", "u"}, status: 200, store: true},
		{name: "invalid cost", fail: &algorithms.CostError{Cost: 5}, header: []string{"X-User", "u"}, status: 200, store: true},
		{name: "invalid spec", fail: &algorithms.SpecError{Field: "Limit", Reason: "too large for this store"}, header: []string{"X-User", "u"}, status: 200, store: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem, clock := newStore(t)
			s := &scripted{mem: mem}
			var errs []error
			m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user, policy.WithCost(badCost))},
				middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			h := m.Handler(ok)
			for i := range 5 {
				if tt.fail != nil {
					s.fail = append(s.fail, tt.fail)
				}
				r := httptest.NewRequest("GET", "/", nil)
				if tt.ctx != nil {
					r = r.WithContext(tt.ctx)
				}
				for j := 0; j+1 < len(tt.header); j += 2 {
					r.Header.Set(tt.header[j], tt.header[j+1])
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != tt.status {
					t.Errorf("request %d: %d, want %d", i, w.Code, tt.status)
				}
			}
			if want := 0; !tt.store && s.calls != want {
				t.Errorf("%d store calls, want %d", s.calls, want)
			}
			if want := 5; tt.store && s.calls != want {
				t.Errorf("%d store calls, want %d (none kept from the store by the breaker)", s.calls, want)
			}
			if len(errs) != 5 {
				t.Errorf("%d errors reported, want 5: %v", len(errs), errs)
			}
			calls := s.calls
			w := serve(h, "GET", "/", "X-User", "v")
			if w.Code != 200 || w.Header().Get("RateLimit") != `"u";r=99;t=60` || s.calls != calls+1 {
				t.Errorf("a good request after them: %d RateLimit %q, %d store calls (want 1); want it decided by the store",
					w.Code, w.Header().Get("RateLimit"), s.calls-calls)
			}
			if st := m.Stats(); st.BreakerOpen != 0 || m.State() != middleware.StateHealthy {
				t.Errorf("breaker opened: stats %+v, state %v", st, m.State())
			}
		})
	}
}

// TestBreakerKeyStateIsAnAnswer: an error about one key's stored value is
// the backend's answer, as the Redis store's own breaker reads it: it
// ends a run of failures as a success does. Two failures with such an
// error between them do not open a breaker of 2; the third failure in a
// row does.
func TestBreakerKeyStateIsAnAnswer(t *testing.T) {
	mem, clock := newStore(t)
	s := &scripted{mem: mem, fail: []error{errDown, errWrongType, errDown, errDown, nil}}
	m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock))
	h := m.Handler(ok)
	for i := range 3 {
		serve(h, "GET", "/")
		if m.Stats().BreakerOpen != 0 {
			t.Fatalf("request %d: breaker open after failure, key-state error, failure", i)
		}
	}
	if m.State() != middleware.StateFailingOpen {
		t.Errorf("state %v after a failure, want %v", m.State(), middleware.StateFailingOpen)
	}
	serve(h, "GET", "/") // the second failure in a row opens it
	serve(h, "GET", "/")
	if st := m.Stats(); st.BreakerOpen != 1 || s.calls != 4 || st.StoreErrors != 5 {
		t.Errorf("after two failures in a row: %d store calls (want 4), stats %+v; want the breaker open", s.calls, st)
	}
}

// TestBreakerTryAgainIsAnAnswer: an error the backend answered, refusing
// the call for now (algorithms.ErrTryAgain: a Redis Cluster slot
// migrating), neither opens the breaker nor counts towards opening it,
// as an error about a key's state does not: every request on the
// migrating slot fails for the migration's length, and an open breaker
// would keep every other key's request from a Redis that is up.
func TestBreakerTryAgainIsAnAnswer(t *testing.T) {
	mem, clock := newStore(t)
	tryAgain := fmt.Errorf("redisstore: take: TRYAGAIN Multiple keys request during rehashing of slot: %w", algorithms.ErrTryAgain)
	s := &scripted{mem: mem, fail: []error{errDown, tryAgain, tryAgain, errDown, tryAgain, nil}}
	m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock))
	h := m.Handler(ok)
	for i := range 6 {
		serve(h, "GET", "/")
		if m.Stats().BreakerOpen != 0 {
			t.Fatalf("request %d: breaker open after failure, TRYAGAIN, TRYAGAIN, failure, TRYAGAIN", i)
		}
	}
	if st := m.Stats(); s.calls != 6 || st.StoreErrors != 5 {
		t.Errorf("%d store calls (want 6), stats %+v; want every request to reach the store", s.calls, st)
	}
	if m.State() != middleware.StateHealthy {
		t.Errorf("state %v after the store answered, want %v", m.State(), middleware.StateHealthy)
	}
}

// TestBreakerProbeOfAGoneClient: the request that probes the store once
// the breaker's cooldown has passed may be one whose client went away: its
// call says nothing about the store. The next request probes instead, at
// once; the breaker kept the store from every request for another whole
// cooldown.
func TestBreakerProbeOfAGoneClient(t *testing.T) {
	mem, clock := newStore(t)
	s := &scripted{mem: mem, fail: []error{errDown}}
	m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithBreaker(1, 10*time.Second), middleware.WithClock(clock))
	h := m.Handler(ok)
	serve(h, "GET", "/") // fails: open
	serve(h, "GET", "/") // kept from the store
	if st := m.Stats(); st.BreakerOpen != 1 || s.calls != 1 {
		t.Fatalf("breaker not open: %d calls, stats %+v", s.calls, st)
	}
	clock.Advance(10 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if w.Code != 503 || s.calls != 2 {
		t.Fatalf("the gone client's probe: %d, %d store calls; want 503 after the store call", w.Code, s.calls)
	}
	w = serve(h, "GET", "/")
	if w.Code != 200 || w.Header().Get("RateLimit") != `"p";r=99;t=50` || s.calls != 3 || m.Stats().BreakerOpen != 1 {
		t.Errorf("the next request: %d RateLimit %q, %d store calls, stats %+v; want it to probe the store and close the breaker",
			w.Code, w.Header().Get("RateLimit"), s.calls, m.Stats())
	}
	if m.State() != middleware.StateHealthy {
		t.Errorf("state %v, want healthy", m.State())
	}
}

// TestBreakerLongCooldownStaysOpen: a cooldown too long to add to the
// clock's time (up to the largest time.Duration) keeps the breaker open as
// long as the clock can tell, rather than wrapping around to a reopening
// time in the past (which let every request through to the failing store).
func TestBreakerLongCooldownStaysOpen(t *testing.T) {
	for _, cooldown := range []time.Duration{math.MaxInt64, math.MaxInt64 - time.Duration(t0.UnixNano()) + 1, 200 * 365 * 24 * time.Hour} {
		t.Run(cooldown.String(), func(t *testing.T) {
			mem, clock := newStore(t)
			s := &scripted{mem: mem, fail: []error{errDown}}
			m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
				middleware.WithBreaker(1, cooldown), middleware.WithClock(clock))
			h := m.Handler(ok)
			serve(h, "GET", "/") // fails: open
			for i := range 3 {
				serve(h, "GET", "/")
				clock.Advance(24 * time.Hour)
				if st := m.Stats(); st.BreakerOpen != int64(i+1) || s.calls != 1 {
					t.Fatalf("request %d after the failure: %d store calls (want 1), stats %+v; want the breaker open", i, s.calls, st)
				}
			}
		})
	}
}

// slowDown is a backend that is down and slow to say so: every call takes
// d on clock, then fails. It counts its calls.
type slowDown struct {
	clock *algotest.Clock
	d     time.Duration
	calls int
}

func (s *slowDown) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.calls++
	s.clock.Advance(s.d)
	return nil, errDown
}

// TestBreakerFailedProbeRestartsCooldown: a probe that fails opens the
// circuit for a whole cooldown from its failure, as the failure that
// opened it did, not from when the probe began: a backend slower than
// the cooldown to fail would otherwise get a probe right after each
// failed one.
func TestBreakerFailedProbeRestartsCooldown(t *testing.T) {
	_, clock := newStore(t)
	s := &slowDown{clock: clock, d: 15 * time.Second}
	m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithBreaker(1, 10*time.Second), middleware.WithClock(clock))
	h := m.Handler(ok)
	serve(h, "GET", "/") // t0: fails at t15, open until t25
	serve(h, "GET", "/") // t15: open
	if s.calls != 1 {
		t.Fatalf("at t15: %d store calls, want 1 (the breaker open)", s.calls)
	}
	clock.Advance(10 * time.Second)
	serve(h, "GET", "/") // t25: the probe, fails at t40
	if s.calls != 2 {
		t.Fatalf("at t25: %d store calls, want 2 (a probe)", s.calls)
	}
	for range 3 {
		serve(h, "GET", "/") // t40, t44, t48: open until t50
		if s.calls != 2 {
			t.Fatalf("at %s, the probe having failed at t40: %d store calls, want 2 (the breaker open for a cooldown from the failure)",
				clock.Now().Sub(t0), s.calls)
		}
		clock.Advance(4 * time.Second)
	}
	clock.Advance(2 * time.Second)
	serve(h, "GET", "/") // t54: the next probe
	if s.calls != 3 {
		t.Fatalf("a cooldown after the failed probe: %d store calls, want 3 (a probe)", s.calls)
	}
}
