package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// With proactive pacing a turn 1ns away is waited for, 1ns, whether the
// request takes it without its line or, holding a place at the gate, in
// it. At 10^6 per millisecond (a turn every 1ns): two requests sent one
// after the other go at 0 and 1ns, the second after sleeping 1ns (kills
// line.go:231's delay <= 1); two that waited at the gate for a hold until
// 100ms (retry-after-ms) go at 100ms and 100ms+1ns (kills line.go:283's
// delay <= 1). Both sent the second 1ns early, with the first.
func TestTurnOneNanosecondAway(t *testing.T) {
	opts := []client.Option{client.WithRate(1_000_000, time.Millisecond), client.WithMaxWait(500 * time.Millisecond)}
	t.Run("without line", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, nil)
		_, tr := newClient(t, clock, opts...)
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
	})
	t.Run("at the gate", func(t *testing.T) {
		clock := newFakeClock()
		srv := newStub(t, clock, nil)
		_, tr := newClient(t, clock, opts...)
		tr.Observe(client.HostKey(mustRequest(t, srv.URL)), http.Header{"Retry-After-Ms": {"100"}}, clock.Now())
		clock.drive(t, 2, func(i int) {
			if i == 1 {
				clock.Sleep(context.Background(), 50*time.Millisecond)
			}
			if err := roundTrip(context.Background(), tr, srv.URL, ""); err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		})
		if at, want := srv.arrivals(), []time.Duration{100 * time.Millisecond, 100*time.Millisecond + time.Nanosecond}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v", at, want)
		}
	})
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A request left without a turn by a Retry-After, which finds on waking at
// the end of the hold that the hold was extended beyond its maximum wait,
// fails then with a *WaitError; it does not sleep out the new hold first.
// At one per second with a maximum wait of 3s: A is sent at 0, B takes the
// turn at 1s; at 500ms a Retry-After-Ms holds the host until 2s, and B,
// woken at 1s, loses its turn and waits for the hold to pass; at 1.5s
// another extends the hold to 5s. B fails at 2s with a held wait of 5s and
// sends nothing. Kills line.go:314's || → && and line.go:315's deleted
// continue (B failed at 5s, having slept out the extended hold).
func TestHeldTurnlessFailsAtOnceOnExtendedHold(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithMaxWait(3*time.Second), client.WithRetries(0))
	key := client.HostKey(mustRequest(t, srv.URL))
	if err := roundTrip(context.Background(), tr, srv.URL, "A"); err != nil {
		t.Fatal(err)
	}
	var err error
	var ended time.Duration
	clock.drive(t, 2, func(i int) {
		switch i {
		case 0:
			err = roundTrip(context.Background(), tr, srv.URL, "B")
			ended = clock.Now().Sub(t0)
		case 1:
			clock.Sleep(context.Background(), 500*time.Millisecond)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"1500"}}, clock.Now())
			clock.Sleep(context.Background(), time.Second)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"3500"}}, clock.Now())
		}
	})
	var we *client.WaitError
	if !errors.As(err, &we) || we.Wait != 5*time.Second || !we.Held {
		t.Errorf("B: %v, want a held *WaitError of 5s", err)
	}
	if ended != 2*time.Second {
		t.Errorf("B returned at %v, want 2s (the end of the hold it slept for)", ended)
	}
	if at, want := srv.arrivals(), []time.Duration{0}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// oneASecondAfterA returns a client pacing its stub server at one request
// per second (maximum wait 10s, no retries), the stub, its host key and the
// clock, once request A has been sent, at 0.
func oneASecondAfterA(t *testing.T) (*fakeClock, *stub, *client.Transport, string) {
	t.Helper()
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithMaxWait(10*time.Second), client.WithRetries(0))
	key := client.HostKey(mustRequest(t, srv.URL))
	if err := roundTrip(context.Background(), tr, srv.URL, "A"); err != nil {
		t.Fatal(err)
	}
	return clock, srv, tr, key
}

// A turn that comes while a Retry-After still holds the host for 1ns is
// lost to the hold like any other: the request takes the store's next turn
// after it. At one per second: A is sent at 0, B takes the turn at 1s; a
// Retry-After-Ms observed at 500ms+1ns holds the host until 1s+1ns. B is
// sent at 2s. Kills line.go:329's hold > 1 (B was sent at 1s, within the
// hold).
func TestTurnWithinLastNanosecondOfHold(t *testing.T) {
	clock, srv, tr, key := oneASecondAfterA(t)
	clock.drive(t, 2, func(i int) {
		switch i {
		case 0:
			if err := roundTrip(context.Background(), tr, srv.URL, "B"); err != nil {
				t.Errorf("B: %v", err)
			}
		case 1:
			clock.Sleep(context.Background(), 500*time.Millisecond)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"500"}}, clock.Now().Add(time.Nanosecond))
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A request sent leaves its line: no turn of its stays there for a later
// hold to take from the store again. At one per second: A is sent at 0, B
// at 1s (its turn, taken without the line, waited for in it), and C takes
// the turn at 2s; a Retry-After-Ms at 1.5s holds the host until 2.5s, and
// C, its turn lost, takes the store's next, at 3s. Kills line.go:336's
// deleted l.remove (B's spent turn stayed in the line, took the 3s turn
// after the hold, and C went at 4s).
func TestSentRequestLeavesLine(t *testing.T) {
	clock, srv, tr, key := oneASecondAfterA(t)
	clock.drive(t, 2, func(i int) {
		switch i {
		case 0:
			for _, name := range []string{"B", "C"} {
				if err := roundTrip(context.Background(), tr, srv.URL, name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		case 1:
			clock.Sleep(context.Background(), 1500*time.Millisecond)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"1000"}}, clock.Now())
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, time.Second, 3 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// refundCounter is a MemoryStore that counts the Refunds asked of it.
type refundCounter struct {
	mem     *algorithms.MemoryStore
	refunds atomic.Int64
}

func (s *refundCounter) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return s.mem.Take(ctx, checks...)
}

func (s *refundCounter) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	s.refunds.Add(1)
	return s.mem.Refund(ctx, dst, checks, ds, waited)
}

// A request that leaves while its turn lies within a Retry-After hold, with
// a request behind it that has a turn, gives its turn to nobody: not to the
// request behind, nor back to the store, which could not take it (the turn
// behind follows it there). At one per second: A is sent at 0, B takes the
// turn at 1s, C the turn at 2s; a Retry-After-Ms at 500ms holds the host
// until 1.5s, and B leaves at 700ms. C is sent at 2s, and the store is
// asked for no refund. Kills line.go:387's deleted freed = time.Time{} (B's
// turn was offered back to the store, a store call for nothing).
func TestLeaveWithinHoldAsksNoRefund(t *testing.T) {
	clock := newFakeClock()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	store := &refundCounter{mem: mem}
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithMaxWait(10*time.Second), client.WithRetries(0), client.WithStore(store))
	key := client.HostKey(mustRequest(t, srv.URL))
	if err := roundTrip(context.Background(), tr, srv.URL, "A"); err != nil {
		t.Fatal(err)
	}
	bCtx, leave := context.WithCancel(context.Background())
	defer leave()
	clock.drive(t, 3, func(i int) {
		switch i {
		case 0:
			if err := roundTrip(bCtx, tr, srv.URL, "B"); !errors.Is(err, context.Canceled) {
				t.Errorf("B: %v, want context.Canceled", err)
			}
		case 1:
			if !awaitSleepers(t, clock, 1, "B waiting for its turn") {
				return
			}
			if err := roundTrip(context.Background(), tr, srv.URL, "C"); err != nil {
				t.Errorf("C: %v", err)
			}
		case 2:
			if !awaitSleepers(t, clock, 2, "B, then C, waiting for their turns") {
				return
			}
			clock.Sleep(context.Background(), 500*time.Millisecond)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"1000"}}, clock.Now())
			clock.Sleep(context.Background(), 200*time.Millisecond)
			leave()
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if n := store.refunds.Load(); n != 0 {
		t.Errorf("%d refunds asked of the store, want 0", n)
	}
}

// A request whose place after a Retry-After would be a turn the store gave
// beyond its maximum wait fails with a *WaitError that does not blame the
// hold (Held false): the wait is the store's turn. At one per second with a
// maximum wait of 1.8s: A is sent at 0, B takes the turn at 1s, C (at
// 500ms) the turn at 2s; a Retry-After-Ms at 600ms holds the host until
// 1.5s. B, whose place is now the turn at 2s, fails with a wait of 2s.
// Kills line.go:441's Held: true.
func TestLateForLiveTurnNotHeld(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithMaxWait(1800*time.Millisecond), client.WithRetries(0))
	key := client.HostKey(mustRequest(t, srv.URL))
	if err := roundTrip(context.Background(), tr, srv.URL, "A"); err != nil {
		t.Fatal(err)
	}
	var errB error
	clock.drive(t, 3, func(i int) {
		switch i {
		case 0:
			errB = roundTrip(context.Background(), tr, srv.URL, "B")
		case 1:
			clock.Sleep(context.Background(), 500*time.Millisecond)
			roundTrip(context.Background(), tr, srv.URL, "C")
		case 2:
			clock.Sleep(context.Background(), 600*time.Millisecond)
			tr.Observe(key, http.Header{"Retry-After-Ms": {"900"}}, clock.Now())
		}
	})
	var we *client.WaitError
	if !errors.As(errB, &we) || we.Wait != 2*time.Second || we.Held {
		t.Errorf("B: %v (%+v), want a *WaitError of 2s, not held", errB, we)
	}
}
