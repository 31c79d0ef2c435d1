package redisstore_test

import (
	"context"
	"errors"
	"strconv"
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

// pauseWrites pauses the write commands of srv's clients (FCALL of the
// store's library among them) for up to ms milliseconds; CLIENT UNPAUSE,
// which is no write, still gets through. The pause is lifted when the test
// ends.
func pauseWrites(t *testing.T, srv *redistest.Server, ms int) {
	t.Helper()
	if _, err := srv.Do("CLIENT", "PAUSE", strconv.Itoa(ms), "WRITE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = srv.Do("CLIENT", "UNPAUSE") })
}

// waitBlocked waits until srv holds at least n clients blocked (paused
// commands among them): the calls a test started are then in flight.
func waitBlocked(t *testing.T, srv *redistest.Server, n int) {
	t.Helper()
	var info string
	blocked := hangguard.Poll(10*time.Second, 2*time.Millisecond, func() bool {
		var err error
		if info, err = srv.Do("INFO", "clients"); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
				if got, _ := strconv.Atoi(v); got >= n {
					return true
				}
			}
		}
		return false
	})
	if !blocked {
		t.Fatalf("fewer than %d clients blocked after 10s: %s", n, info)
	}
}

var breakerCheck = algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour}, Key: "breaker"}

// TestBreakerIgnoresCallersCancelling: in the middleware every Take runs
// on the request's context, which ends when the client goes away. Callers
// that cancel their calls while Redis is slow (here: paused) say nothing
// about Redis: however many do, the circuit stays closed, and once Redis
// answers the next Take is decided, not refused with ErrCircuitOpen. With a
// client that bounds I/O by the context (ContextTimeoutEnabled), go-redis
// does not stop a call on cancellation, only at a deadline: the call ends
// at the client's read timeout, and is still the caller's.
func TestBreakerIgnoresCallersCancelling(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		name := "client_default"
		if ctxTimeouts {
			name = "client_ContextTimeoutEnabled"
		}
		t.Run(name, func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: 300 * time.Millisecond, PoolSize: 16})
			defer client.Close()
			s, err := redisstore.New(client, redisstore.WithCircuitBreaker(1, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Take(context.Background(), breakerCheck); err != nil {
				t.Fatal(err)
			}
			pauseWrites(t, srv, 20000)
			const callers = 8
			ctx, cancel := context.WithCancel(context.Background())
			errs := make(chan error, callers)
			for range callers {
				go func() {
					_, err := s.Take(ctx, breakerCheck)
					errs <- err
				}()
			}
			waitBlocked(t, srv, callers) // every call is at Redis
			cancel()
			for range callers {
				if err := <-errs; !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled Take = %v, want context.Canceled", err)
				}
			}
			if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
				t.Fatal(err)
			}
			if d, err := s.Take(context.Background(), breakerCheck); err != nil || !d[0].Allowed {
				t.Fatalf("after %d callers cancelled (breaker of 1 failure), Take = %+v, %v; want it decided", callers, d, err)
			}
			_ = s.Close()
			_ = client.Close()
		})
	}
}

// TestBreakerIgnoresShortDeadlines: a caller whose deadline leaves Redis
// too little time (here 20 ms, while the client's one connection is held
// by the application's own BLPOP: Redis answers, the client cannot send)
// fails with its deadline; that is not Redis failing, and must not open
// the circuit for every other request. Before the fix each such Take
// counted as a failure, and the fourth Take after them got ErrCircuitOpen.
func TestBreakerIgnoresShortDeadlines(t *testing.T) {
	queue := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}, Key: "held"}
	for _, tc := range []struct {
		name string
		// call makes the store call of the case on ctx; ds are the
		// decisions of a Take of queue made before.
		call func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error
	}{
		{"take", func(ctx context.Context, s *redisstore.Store, _ []algorithms.Decision) error {
			_, err := s.Take(ctx, breakerCheck)
			return err
		}},
		// Refund asks the breaker as Take does (b0858dd).
		{"refund", func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error {
			return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{queue}, ds, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, PoolSize: 1, MaxRetries: -1})
			defer client.Close()
			s, err := redisstore.New(client, redisstore.WithCircuitBreaker(3, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ds, err := s.Take(context.Background(), queue)
			if err != nil || !ds[0].Allowed {
				t.Fatalf("Take = %+v, %v", ds, err)
			}
			popped := make(chan error, 1)
			go func() { popped <- client.BLPop(context.Background(), 0, "app:queue").Err() }()
			waitBlocked(t, srv, 1)
			for i := range 10 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				err := tc.call(ctx, s, ds)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s %d with the only connection held = %v, want context.DeadlineExceeded", tc.name, i, err)
				}
			}
			if _, err := srv.Do("LPUSH", "app:queue", "job"); err != nil {
				t.Fatal(err)
			}
			if err := <-popped; err != nil {
				t.Fatal(err)
			}
			if d, err := s.Take(context.Background(), breakerCheck); err != nil || !d[0].Allowed {
				t.Fatalf("after 10 calls' 20ms deadlines expired (breaker of 3 failures), Take = %+v, %v; want it decided", d, err)
			}
			_ = s.Close()
			_ = client.Close()
		})
	}
}

// TestBreakerOpensOnTimingOutRedis: a Redis that does not answer (its
// writes paused) still opens the circuit, whichever deadline ends the
// calls: the store's WithTimeout, or the callers' own deadlines (100 ms,
// with no WithTimeout or a longer one), no call getting a reply meanwhile.
// Once open, a Take is refused at once.
func TestBreakerOpensOnTimingOutRedis(t *testing.T) {
	cases := []struct {
		name     string
		timeout  time.Duration // WithTimeout; 0: none (not the default)
		deadline time.Duration // the callers'; 0: none
	}{
		{"store_timeout", 100 * time.Millisecond, 0},
		{"caller_deadline", 0, 100 * time.Millisecond},
		{"caller_deadline_within_store_timeout", time.Second, 100 * time.Millisecond},
	}
	for _, tc := range cases {
		for _, ctxTimeouts := range []bool{false, true} {
			name := tc.name + "/client_default"
			if ctxTimeouts {
				name = tc.name + "/client_ContextTimeoutEnabled"
			}
			t.Run(name, func(t *testing.T) {
				srv := redistest.New(t)
				defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: 3 * time.Second})
				defer client.Close()
				hook := &countHook{}
				client.AddHook(hook)
				warmUp(t, client, breakerCheck) // not under the 100ms tested
				opts := []redisstore.Option{redisstore.WithCircuitBreaker(3, time.Hour), redisstore.WithTimeout(tc.timeout)}
				s, err := redisstore.New(client, opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				pauseWrites(t, srv, 20000)
				take := func() error {
					ctx := context.Background()
					if tc.deadline > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.deadline)
						defer cancel()
					}
					_, err := s.Take(ctx, breakerCheck)
					return err
				}
				for i := range 3 {
					if err := take(); !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("Take %d on a paused Redis = %v, want an error wrapping context.DeadlineExceeded", i, err)
					}
				}
				// At once: nothing sent (a call sent would wait for its
				// 100 ms deadline), and no wait behind the three abandoned
				// calls, which hold their connections until the 3 s
				// ReadTimeout when the client does not bound I/O by the
				// context.
				hook.take()
				// The bound counts the test process's running time
				// (hangguard), not the wall's, which a process starved by
				// a loaded machine can overrun.
				const bound = time.Second
				result := make(chan error, 1)
				start := time.Now()
				go func() { result <- take() }()
				err, ok := hangguard.Within(result, bound)
				if !ok {
					t.Fatalf("after 3 timeouts (breaker of 3 failures), Take had not returned after %s of the test's running time, want ErrCircuitOpen at once", bound)
				}
				if took := time.Since(start); took > bound {
					t.Logf("ErrCircuitOpen returned after %s on the wall clock, within %s of the test's running time", took, bound)
				}
				if !errors.Is(err, redisstore.ErrCircuitOpen) {
					t.Fatalf("after 3 timeouts (breaker of 3 failures), Take = %v, want ErrCircuitOpen", err)
				}
				if sent := hook.take(); len(sent) != 0 {
					t.Errorf("the open circuit sent %v to Redis", sent)
				}
				if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
					t.Fatal(err)
				}
				_ = s.Close() // waits for the abandoned calls
				_ = client.Close()
			})
		}
	}
}
