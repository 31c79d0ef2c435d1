package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// slowStore is a MemoryStore whose first Take sleeps on the clock for slow
// before it answers: a remote store slow to answer, in virtual time, so
// that the clock moves during the call.
type slowStore struct {
	mem   *algorithms.MemoryStore
	clock *fakeClock
	slow  time.Duration
	once  sync.Once
}

func (s *slowStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		if err := s.clock.Sleep(ctx, s.slow); err != nil {
			return nil, err
		}
	}
	return s.mem.Take(ctx, checks...)
}

func (s *slowStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	return s.mem.Refund(ctx, dst, checks, ds, waited)
}

// readClock is a fakeClock that tells, once armed with a channel, when Now
// is next read, closing the channel.
type readClock struct {
	*fakeClock
	next atomic.Pointer[chan struct{}]
}

func (c *readClock) Now() time.Time {
	now := c.fakeClock.Now()
	if ch := c.next.Swap(nil); ch != nil {
		close(*ch)
	}
	return now
}

// slowGate is a Transport pacing api.example at 5 per second over a store
// whose first Take sleeps slow on the clock, with the maximum wait given,
// and the server under it, which records the X-Caller of each request and
// when it came, and tells sent of it. The key is held until 1s by a
// RateLimit field announcing no quota left: the first request waits for the
// hold at the gate, and then holds the first place there through its slow
// store call.
type slowGate struct {
	fc      *fakeClock
	clock   *readClock
	tr      *client.Transport
	sent    chan string
	mu      sync.Mutex
	callers []string
	at      []time.Duration
}

func newSlowGate(t *testing.T, slow, maxWait time.Duration) *slowGate {
	t.Helper()
	fc := newFakeClock()
	g := &slowGate{fc: fc, clock: &readClock{fakeClock: fc}, sent: make(chan string, 8)}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(fc))
	if err != nil {
		t.Fatal(err)
	}
	server := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		g.mu.Lock()
		g.callers = append(g.callers, r.Header.Get("X-Caller"))
		g.at = append(g.at, fc.Now().Sub(t0))
		g.mu.Unlock()
		g.sent <- r.Header.Get("X-Caller")
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	g.tr, err = client.New(server, client.WithClock(g.clock), client.WithRate(5, time.Second),
		client.WithMaxWait(maxWait), client.WithStore(&slowStore{mem: mem, clock: fc, slow: slow}))
	if err != nil {
		t.Fatal(err)
	}
	g.tr.Observe("api.example", http.Header{"Ratelimit": {`"p";r=0;t=1`}}, fc.Now())
	return g
}

// send starts a request of caller, whose error done receives.
func (g *slowGate) send(caller string) (done chan error) {
	done = make(chan error, 1)
	go func() { done <- roundTrip(context.Background(), g.tr, "http://api.example/", caller) }()
	return done
}

// first has A wait for the hold and, at 1s, enter its slow store call,
// holding the first place at the gate.
func (g *slowGate) first(t *testing.T) (done chan error) {
	t.Helper()
	done = g.send("A")
	g.fc.waitSleepers(t, 1, "A waits for the hold")
	g.fc.Advance(time.Second)
	g.fc.waitSleepers(t, 1, "A waits for the store")
	return done
}

func (g *slowGate) order() ([]string, []time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.callers), slices.Clone(g.at)
}

// Requests that meet no hold but find others of their key at the gate take
// their places there, in the order they arrived, and go in that order. A
// waits for a hold until 1s and then, first at the gate, for a store call
// that answers at 3s; B and then C arrive at 1.5s, with no hold left, and
// queue behind A: A is sent at 3s, B at 3.2s, C at 3.4s; X, to another
// host, arrives then too and is sent at once, without a gate. A request that
// did not take its place at the gate (pace.go's gate.enter of the no-hold
// branch deleted) looked at it again and again, never asleep, until it was
// empty, and then raced the requests behind it for the line (the later
// could go first).
func TestGateArrivalsWithoutHoldKeepOrder(t *testing.T) {
	g := newSlowGate(t, 2*time.Second, 10*time.Second)
	defer g.fc.Advance(time.Hour) // after a failure, lets every request finish
	reads := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var looks atomic.Int32
	defer client.BeforeGateEnter(func() {
		if n := looks.Add(1); int(n) <= len(reads) {
			g.clock.next.Store(&reads[n-1]) // told as it looks again
		}
	})()
	doneA := g.first(t)
	g.fc.Advance(500 * time.Millisecond)
	doneB := g.send("B")
	guard(t, "B looks again, after it took its place", func() { <-reads[0] })
	doneC := g.send("C")
	guard(t, "C looks again, after it took its place", func() { <-reads[1] })
	if n := looks.Load(); n != 2 {
		t.Errorf("B and C looked at the busy gate %d times before taking their places, want once each", n)
	}
	// A request of another key, none of which is at the gate, goes at once
	// without it (gate.go's busy reported any key's tickets with >= 0).
	doneX := make(chan error, 1)
	go func() { doneX <- roundTrip(context.Background(), g.tr, "http://other.example/", "X") }()
	guard(t, "X is sent at once", func() { <-g.sent })
	var errX error
	guard(t, "X returns", func() { errX = <-doneX })
	if n := looks.Load(); errX != nil || n != 2 {
		t.Errorf("X: %v, and %d requests went through a gate, want nil and B and C alone", errX, n)
	}
	g.fc.Advance(1500 * time.Millisecond)
	guard(t, "A is sent at 3s", func() { <-g.sent })
	g.fc.waitSleepers(t, 2, "B and C wait for their turns")
	g.fc.Advance(200 * time.Millisecond)
	guard(t, "the second is sent", func() { <-g.sent })
	g.fc.waitSleepers(t, 1, "the third waits for its turn")
	g.fc.Advance(200 * time.Millisecond)
	guard(t, "the third is sent", func() { <-g.sent })
	for i, done := range []chan error{doneA, doneB, doneC} {
		var err error
		guard(t, "the requests return", func() { err = <-done })
		if err != nil {
			t.Errorf("request %c: %v", 'A'+i, err)
		}
	}
	callers, at := g.order()
	if want := []string{"X", "A", "B", "C"}; !slices.Equal(callers, want) {
		t.Errorf("sent %v, want %v: X at once, the others in the order in which they arrived", callers, want)
	}
	if want := []time.Duration{1500 * time.Millisecond, 3 * time.Second, 3200 * time.Millisecond, 3400 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("sent at %v, want %v", at, want)
	}
}

// The time a request waits at the gate for the one ahead of it counts
// against its maximum wait, with the holds it waits for (WithMaxWait: the
// holds "all of them together"; pace.go: "That wait counts as held"). With
// a maximum wait of 3s: A waits for a hold until 1s, then holds the first
// place at the gate through a store call that answers at 4s; B arrives at
// 1.5s and waits at the gate behind A; at 3.5s a new hold until 5.5s comes.
// B has waited 2s and would wait 2s more: 4s, beyond the maximum, so it
// fails at once, at 3.5s, with a *WaitError saying so. Without the 2s at
// the gate counted (pace.go's held += deleted, or -=), B slept on until
// 5.5s and was sent 4s after it arrived.
func TestGateWaitCountsAgainstMaxWait(t *testing.T) {
	g := newSlowGate(t, 3*time.Second, 3*time.Second)
	defer g.fc.Advance(time.Hour) // after a failure, lets every request finish
	read := make(chan struct{})
	var once sync.Once
	defer client.BeforeGateEnter(func() { once.Do(func() { g.clock.next.Store(&read) }) })()
	doneA := g.first(t)
	g.fc.Advance(500 * time.Millisecond)
	doneB := g.send("B")
	guard(t, "B waits at the gate from 1.5s", func() { <-read })
	g.fc.Advance(2 * time.Second)
	g.tr.Observe("api.example", http.Header{"Ratelimit": {`"p";r=0;t=2`}}, g.fc.Now())
	var errB error
	guard(t, "B fails at once, at 3.5s (it waits on, its time at the gate not counted)", func() { errB = <-doneB })
	var we *client.WaitError
	if !errors.As(errB, &we) {
		t.Fatalf("B: %v, want a *WaitError (it would have waited 4s, beyond the maximum of 3s)", errB)
	}
	if we.Wait != 4*time.Second || we.MaxWait != 3*time.Second || !we.Held || we.Deadline {
		t.Errorf("B: %+v, want Wait 4s, MaxWait 3s, Held, no Deadline", *we)
	}
	g.fc.Advance(500 * time.Millisecond)
	var errA error
	guard(t, "A returns", func() { errA = <-doneA })
	if errA != nil {
		t.Errorf("A: %v", errA)
	}
	if callers, _ := g.order(); !slices.Equal(callers, []string{"A"}) {
		t.Errorf("sent %v, want A alone", callers)
	}
}

// Without proactive pacing a request whose turn is now leaves without
// sleeping (a Clock is never asked to sleep for d <= 0), and one whose turn
// is 1ns away sleeps that 1ns. At 10^6 per millisecond (a turn every 1ns)
// two requests arrive together: the first is sent at once, the second 1ns
// later, and the clock slept once, for 1ns. Kills pace.go:86's mutants:
// delay < 0 and err != nil && delay <= 0 (Sleep(0) for the first) and
// delay <= 1 (the second left 1ns early).
func TestUnpacedTurnSleepsOnlyToComeLater(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1_000_000, time.Millisecond), client.WithMaxWait(time.Millisecond), client.WithProactive(false))
	for range 2 {
		if err := roundTrip(context.Background(), tr, srv.URL, ""); err != nil {
			t.Fatal(err)
		}
	}
	if at, want := srv.arrivals(), []time.Duration{0, time.Nanosecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Nanosecond}) {
		t.Errorf("slept %v, want [1ns]", got)
	}
}
