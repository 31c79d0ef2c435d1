package client_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// A caller that leaves while its turn lies within a Retry-After hold gives
// nothing the callers behind it could use: that turn is lost to the hold.
// The caller behind, whose turn comes after the hold, keeps it. At one per
// second, Transport X queues callers 1 (turn at 1s) and 2 (2s) behind the
// refused caller 0, and Transport Y, sharing the store, caller 3 (3s). X's
// hold lasts until 2s; caller 1 leaves at 500ms. (Moved up to caller 1's
// turn, within the hold, caller 2 lost its own, which went back to a store
// that could not take it, Y's being behind it: it took a new turn at 4s,
// beyond its maximum wait of 3s, and failed.)
func TestLeaveWithinHoldKeepsTurnsBehind(t *testing.T) {
	leaveWithinHold(t, memFleet(t))
}

// fleetOf2 builds two clients over Transports sharing a store, with opts.
type fleetOf2 func(clock *fakeClock, opts ...client.Option) (x, y *http.Client)

// memFleet builds two clients over Transports sharing a MemoryStore.
func memFleet(t *testing.T) fleetOf2 {
	return func(clock *fakeClock, opts ...client.Option) (x, y *http.Client) {
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		x, _ = newClient(t, clock, append(opts, client.WithStore(store))...)
		y, _ = newClient(t, clock, append(opts, client.WithStore(store))...)
		return x, y
	}
}

func leaveWithinHold(t *testing.T, fleet fleetOf2) {
	t.Helper()
	queueRun{n: 3, ra: "2", leaver: 1, leaveAt: 500 * time.Millisecond,
		clients: func(clock *fakeClock) []*http.Client {
			x, y := fleet(clock, client.WithRate(1, time.Second), client.WithMaxWait(3*time.Second))
			return []*http.Client{x, x, x, y}
		},
	}.check(t, []string{"0", "2", "3", "0"}, []time.Duration{0, 2 * time.Second, 3 * time.Second, 4 * time.Second})
}

// A turn the store gives for a request that it comes too late for, with no
// request behind to take it, goes back to the store. At one per second,
// Transport X's caller 1 queues (turn at 1s) behind the refused caller 0
// (not retried), and Transport Y, sharing the store, queues caller 2 (2s).
// X's hold until 2s takes caller 1's turn; when it ends, the store's next
// turn, 3s, is beyond caller 1's maximum wait of 2.5s, and it fails. A
// caller of X arriving at 2.5s takes that turn, at 3s. (It was lost: the
// caller waited for 4s.)
func TestSpareTurnGoesBack(t *testing.T) {
	spareTurn(t, memFleet(t))
}

func spareTurn(t *testing.T, fleet fleetOf2) {
	t.Helper()
	errs, _ := queueRun{n: 2, ra: "2", late: 2500 * time.Millisecond,
		clients: func(clock *fakeClock) []*http.Client {
			x, y := fleet(clock, client.WithRate(1, time.Second), client.WithMaxWait(2500*time.Millisecond), client.WithRetries(0))
			return []*http.Client{x, x, y, x}
		},
	}.check(t, []string{"0", "2", "late"}, []time.Duration{0, 2 * time.Second, 3 * time.Second}, 0, 1)
	var we *client.WaitError
	if !errors.As(errs[1], &we) || we.Wait != 3*time.Second {
		t.Errorf("caller 1: %v, want a *WaitError of 3s", errs[1])
	}
}

// Without proactive pacing too, a caller whose context ends while it waits
// for its turn gives the turn back, as the Transport's doc says: the next
// caller takes it. (It was kept: the next caller waited for 20s.)
func TestContextCancelledWhileWaitingNotProactive(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, 10*time.Second), client.WithProactive(false))
	send := func(ctx context.Context) error { return roundTrip(ctx, tr, srv.URL, "") }
	if err := send(context.Background()); err != nil { // at once
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	clock.drive(t, 2, func(i int) {
		switch i {
		case 0: // turn at 10s; leaves at once
			if err := send(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("the caller that left got %v", err)
			}
		case 1:
			if !awaitSleepers(t, clock, 1, "the caller that leaves waiting for its turn") {
				return
			}
			cancel()
			clock.Sleep(context.Background(), time.Second)
			if err := send(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	if at := srv.arrivals(); !slices.Equal(at, []time.Duration{0, 10 * time.Second}) {
		t.Errorf("arrivals %v, want [0s 10s]: the turn given up goes to the next caller", at)
	}
}

// gateStore is a MemoryStore whose Take, once closed, waits for the gate to
// open: a remote store that is slow to answer.
type gateStore struct {
	mem     *algorithms.MemoryStore
	closed  atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (s *gateStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.closed.Load() {
		s.entered <- struct{}{}
		<-s.gate
	}
	return s.mem.Take(ctx, checks...)
}

func (s *gateStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	return s.mem.Refund(ctx, dst, checks, ds, waited)
}

// A queued caller whose context ends returns at once even while another
// caller of its line waits for a slow store (the line is held across store
// calls): its turn is given on when the store answers. Caller B queues
// (turn at 10s); caller C's store call hangs; B is cancelled and returns
// at once; when the store answers, C takes B's turn, at 10s. (B waited for
// the store with C.)
func TestLeaveWhileStoreIsSlow(t *testing.T) {
	clock := newFakeClock()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	store := &gateStore{mem: mem, entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var mu sync.Mutex
	var sent []time.Duration
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent = append(sent, clock.Now().Sub(t0))
		mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := client.New(next, client.WithClock(clock), client.WithRate(1, 10*time.Second), client.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	send := func(ctx context.Context) error { return roundTrip(ctx, tr, "http://api.example/", "") }
	if err := send(context.Background()); err != nil { // at once
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bDone, cDone := make(chan error, 1), make(chan error, 1)
	go func() { bDone <- send(ctx) }()
	clock.waitAsleep(t, 1, "B waiting for its turn at 10s")
	store.closed.Store(true)
	go func() { cDone <- send(context.Background()) }()
	hangguard.Await(t, store.entered, waitBound, "C holding the line in a store call")
	cancel()
	returned := false
	if err, ok := hangguard.Within(bDone, 5*time.Second); !ok {
		t.Error("B did not return while C's store call held the line")
	} else {
		returned = true
		if !errors.Is(err, context.Canceled) {
			t.Errorf("B: %v, want context.Canceled", err)
		}
	}
	store.closed.Store(false)
	close(store.gate)
	// Not B's sleep, whose context ended, if B is still there: C's.
	clock.waitAsleep(t, 1, "C waiting for its turn")
	clock.Advance(10 * time.Second)
	if err := hangguard.Await(t, cDone, waitBound, "C returned after its turn at 10s"); err != nil {
		t.Fatal(err)
	}
	if !returned {
		hangguard.Await(t, bDone, waitBound, "B returned")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{0, 10 * time.Second}; !slices.Equal(sent, want) {
		t.Errorf("sent at %v, want %v: C takes the turn B gave up", sent, want)
	}
}

// stepStore is a MemoryStore whose Takes numbered in hold answer only once
// their gates open (the place is taken at once: a slow reply), and whose
// Refunds, while refunds is not nil, wait for it to close.
type stepStore struct {
	mem     *algorithms.MemoryStore
	mu      sync.Mutex
	takes   int
	hold    map[int]chan struct{}
	entered chan int
	refunds chan struct{}
}

func (s *stepStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.mem.Take(ctx, checks...)
	s.mu.Lock()
	s.takes++
	gate := s.hold[s.takes]
	n := s.takes
	s.mu.Unlock()
	if gate != nil {
		s.entered <- n
		<-gate
	}
	return ds, err
}

func (s *stepStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	s.mu.Lock()
	gate := s.refunds
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return s.mem.Refund(ctx, dst, checks, ds, waited)
}

// A request that took its turn without the line (none of the Transport's
// requests waited when it asked the store) and leaves before it gets the
// line, busy in a slow store call, returns at once, and its turn is given
// on like that of any request of the line: the requests behind it move up.
// At one per 10s: A leaves at 0; F's store call takes its turn (10s) but
// answers late; B takes 20s meanwhile and waits in the line; C, in the
// line, asks the store (30s), which answers late; F gets its answer, waits
// for the line and is cancelled. F returns while the store is slow (its
// refunds too), and B leaves at 10s, C at 20s. (F gave its turn back to
// the store itself, waiting for it, and the store could not take it, C's
// being behind: B left at 20s, C at 30s.)
func TestFastTurnGivenOnWhileLineIsBusy(t *testing.T) {
	clock := newFakeClock()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	fGate, cGate := make(chan struct{}), make(chan struct{})
	store := &stepStore{mem: mem, hold: map[int]chan struct{}{2: fGate, 4: cGate}, entered: make(chan int)}
	var mu sync.Mutex
	sent := map[string]time.Duration{}
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent[r.Header.Get("X-Caller")] = clock.Now().Sub(t0)
		mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := client.New(next, client.WithClock(clock), client.WithRate(1, 10*time.Second), client.WithMaxWait(time.Minute), client.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	send := func(ctx context.Context, name string) error {
		return roundTrip(ctx, tr, "http://api.example/", name)
	}
	if err := send(context.Background(), "A"); err != nil { // at once
		t.Fatal(err)
	}
	fCtx, cancelF := context.WithCancel(context.Background())
	defer cancelF()
	fDone, bDone, cDone := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go func() { fDone <- send(fCtx, "F") }()
	hangguard.Await(t, store.entered, waitBound, "F's turn taken, its answer held back")
	go func() { bDone <- send(context.Background(), "B") }()
	clock.waitAsleep(t, 1, "B waiting in the line")
	go func() { cDone <- send(context.Background(), "C") }()
	hangguard.Await(t, store.entered, waitBound, "C holding the line in a store call")
	store.mu.Lock()
	store.refunds = make(chan struct{})
	store.mu.Unlock()
	close(fGate)
	cancelF()
	if err, ok := hangguard.Within(fDone, 5*time.Second); !ok {
		t.Error("F did not return while the store was slow")
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("F: %v, want context.Canceled", err)
	}
	close(store.refunds)
	close(cGate)
	for i, step := range []struct {
		name string
		done chan error
	}{{"B", bDone}, {"C", cDone}} {
		// B and C, then C, wait for their turns: time moves only once
		// their sleeps are set.
		clock.waitAsleep(t, 2-i, "B and C, then C, waiting for their turns")
		before := clock.asleep()
		clock.Advance(10 * time.Second)
		if clock.asleep() != before-1 {
			t.Errorf("%s still waits at %v", step.name, clock.Now().Sub(t0))
			clock.Advance(10 * time.Second)
		}
		if err := hangguard.Await(t, step.done, waitBound, step.name+" returned after its turn"); err != nil {
			t.Errorf("%s: %v", step.name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]time.Duration{"A": 0, "B": 10 * time.Second, "C": 20 * time.Second}; !maps.Equal(sent, want) {
		t.Errorf("sent at %v, want %v: B and C move up into F's turn", sent, want)
	}
}
