package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// TestRSReview2EveryCallHonoursTheTimeout: on a Redis that answers no
// script call nor DEL (writes paused; every command for the Peek), each call of the store, Peek,
// Reset, GiveBack and Refund as well as Take, on a context without
// deadline, fails at the store's timeout with the store's error naming
// the call, wrapping context.DeadlineExceeded, whether or not the client
// bounds its I/O by the context; and Close, once Redis answers again,
// leaves no goroutine behind. On a client that does not bound its I/O by
// the context, the calls abandoned at the deadline stay on their
// connections and run when Redis resumes (WithTimeout's doc says so).
func TestRSReview2EveryCallHonoursTheTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	fw := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 24 * time.Hour}, Key: "fw"}
	lq := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Hour, MaxDelay: 24 * time.Hour}, Key: "q"}
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("paused", ctxTimeouts), func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
			defer client.Close()
			warmUp(t, client, fw)
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			// The decisions the GiveBack and Refund below hand back are
			// taken on the live server through a store of the same
			// client and prefix whose timeout is a failure bound
			// (slowMachineTimeout): at 100ms, a loaded machine under
			// -race can end that Take, which must decide, and the
			// server may have run it all the same (the count at the end
			// would not know). The calls under the timeout are those on
			// the paused Redis.
			live, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			ds, err := live.Take(ctx, fw, lq)
			if err != nil || !ds[0].Allowed || !ds[1].Allowed {
				t.Fatalf("Take on a live server = %+v, %v", ds, err)
			}
			pauseWrites(t, srv, 30000)
			calls := []struct {
				op   string
				call func() error
			}{
				{"reset", func() error { return s.Reset(ctx, algorithms.Check{Spec: fw.Spec, Key: "other"}) }},
				{"give-back", func() error {
					return s.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{fw}, ds[:1], 0)
				}},
				{"refund", func() error { return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{lq}, ds[1:], 0) }},
				{"take", func() error { _, err := s.Take(ctx, fw); return err }},
				// Last: a Peek, a call of a no-writes function, goes
				// through a pause of writes; all commands are paused for
				// it, for a second, which CLIENT UNPAUSE cannot lift.
				{"peek", func() error { return s.Peek(ctx, make([]algorithms.Decision, 1), []algorithms.Check{fw}) }},
			}
			for _, c := range calls {
				if c.op == "peek" {
					if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
						t.Fatal(err)
					}
					if _, err := srv.Do("CLIENT", "PAUSE", "1000", "ALL"); err != nil {
						t.Fatal(err)
					}
				}
				done := make(chan error, 1)
				start := time.Now()
				go func() { done <- c.call() }()
				// The bound counts the test process's running time
				// (hangguard): a time.After would fire as soon as a
				// process starved by a loaded machine ran again, before
				// the call woken with it had returned.
				err, ok := hangguard.Within(done, timeout+defaultSlack)
				if !ok {
					t.Fatalf("%s on a paused Redis had not returned after %s of the test's running time", c.op, timeout+defaultSlack)
				}
				took := time.Since(start)
				if took > timeout+defaultSlack {
					t.Logf("%s returned after %s on the wall clock, within %s of the test's running time", c.op, took, timeout+defaultSlack)
				}
				want := "redisstore: " + c.op + ": no reply from Redis within " + timeout.String()
				if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%s on a paused Redis = %v, want %q... wrapping context.DeadlineExceeded", c.op, err, want)
				}
				if took < timeout {
					t.Errorf("%s failed after %s, before the %s timeout", c.op, took, timeout)
				}
			}
			_ = s.Close() // waits for the abandoned calls, to the pause's end
			if !ctxTimeouts {
				// The calls abandoned at the deadline stayed on their
				// connections and ran once Redis resumed: the GiveBack
				// and the Refund reported failed gave back, the Take
				// consumed (see WithTimeout).
				look, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(0))
				if err != nil {
					t.Fatal(err)
				}
				pk := make([]algorithms.Decision, 2)
				if err := look.Peek(ctx, pk, []algorithms.Check{fw, lq}); err != nil || pk[0].Remaining != 4 || pk[1].Remaining != lq.Spec.Capacity() {
					t.Errorf("after Redis resumed: fw %+v, lq %+v, %v; want fw 4 remaining (given back, then taken), lq empty", pk[0], pk[1], err)
				}
			}
			_ = client.Close()
		})
	}
}

// TestRSReview2AbandonedCallEndsAtReadTimeout: on a client that does not
// bound its I/O by the context, a call the caller abandoned at the
// store's timeout, on a Redis that never answers it (writes paused for
// longer than the test), ends at the client's ReadTimeout, sent once (the
// client does not retry a call whose context has ended): Close returns
// then, with Redis still paused, and no goroutine is left.
func TestRSReview2AbandonedCallEndsAtReadTimeout(t *testing.T) {
	const timeout, readTimeout = 100 * time.Millisecond, 500 * time.Millisecond
	srv := redistest.New(t)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: readTimeout})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	pauseWrites(t, srv, 60000)
	if _, err := takeBounded(t, s, context.Background(), dayBucket, timeout+defaultSlack); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on a paused Redis = %v, want the store's timeout", err)
	}
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	// The bound counts the test process's running time (hangguard), not
	// the wall's.
	if _, ok := hangguard.Within(closed, readTimeout+defaultSlack); !ok {
		t.Fatalf("Close had not returned %s (of the test's running time) after the Take, on a Redis still paused: the abandoned call outlived the client's ReadTimeout (%s)", readTimeout+defaultSlack, readTimeout)
	}
	_ = client.Close()
}

// TestRSReview2AbandonedCallWithoutReadTimeout: with no ReadTimeout (-1)
// on a client that does not bound its I/O by the context, nothing but
// Redis's reply or the connection's end ends a call its caller abandoned
// at the store's timeout; closing the client ends it, and Close then
// returns, Redis still paused, with no goroutine left (Close's doc).
func TestRSReview2AbandonedCallWithoutReadTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := redistest.New(t)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	pauseWrites(t, srv, 60000)
	if _, err := takeBounded(t, s, context.Background(), dayBucket, timeout+defaultSlack); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on a paused Redis = %v, want the store's timeout", err)
	}
	_ = client.Close()
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	// The bound counts the test process's running time (hangguard), not
	// the wall's.
	if _, ok := hangguard.Within(closed, defaultSlack); !ok {
		t.Fatalf("Close had not returned %s (of the test's running time) after the client was closed", defaultSlack)
	}
}

// TestRSReview2CancelledCallEndsAtTheStoresDeadline: on a client with
// ContextTimeoutEnabled, which bounds I/O by a deadline and not by a
// cancellation, a Take its caller cancels while Redis holds it (writes
// paused for longer) returns context.Canceled, the caller's error, at the
// store's timeout, not at once and not at the client's ReadTimeout (the
// package doc, "Failures").
func TestRSReview2CancelledCallEndsAtTheStoresDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pauseWrites(t, srv, 60000)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := s.Take(ctx, dayBucket)
		done <- result{err, time.Since(start)}
	}()
	waitBlocked(t, srv, 1)
	cancel()
	// The bound counts the test process's running time (hangguard), not
	// the wall's.
	r, ok := hangguard.Within(done, timeout+defaultSlack)
	if !ok {
		t.Fatalf("cancelled Take had not returned after %s of the test's running time", timeout+defaultSlack)
	}
	if r.err != context.Canceled || r.took < timeout {
		t.Errorf("Take cancelled while Redis held it = %v after %s; want context.Canceled at the %s timeout", r.err, r.took, timeout)
	}
}
