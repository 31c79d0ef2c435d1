package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// ignoreServerWaiter ignores the goroutine with which the test helper waits
// for a redis-server it (re)started; the helper stops it in t.Cleanup.
var ignoreServerWaiter = goleak.IgnoreAnyFunction("github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest.(*Server).startProcess.func1")

var dayBucket = algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: 24 * time.Hour}, Key: "k"}

// TestContextDeadlineSlowRedis: with the server paused, a Take returns the
// context's error at its deadline, whether or not the client itself bounds
// I/O by the context; and no goroutine outlives Close.
func TestContextDeadlineSlowRedis(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		name := "client_default"
		if ctxTimeouts {
			name = "client_ContextTimeoutEnabled"
		}
		t.Run(name, func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: 2 * time.Second})
			defer client.Close()
			s, err := redisstore.New(client)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Take(context.Background(), dayBucket); err != nil {
				t.Fatal(err)
			}
			// Writes (the store's calls) paused far longer than the bound
			// below, so that a Take that ignored its deadline would wait out
			// the 2 s ReadTimeout; unpaused once the Take returned, so that
			// Close does not wait.
			pauseWrites(t, srv, 20000)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			// The bound counts the test process's running time (hangguard),
			// not the wall's, which a process starved by a loaded machine
			// can overrun.
			const bound = time.Second
			result := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := s.Take(ctx, dayBucket)
				result <- err
			}()
			err, ok := hangguard.Within(result, bound)
			if !ok {
				t.Fatalf("Take had not returned after %s of the test's running time, want about the 50ms deadline (not the 2s ReadTimeout)", bound)
			}
			if took := time.Since(start); took > bound {
				t.Logf("Take returned after %s on the wall clock, within %s of the test's running time", took, bound)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Take on a paused server = %v, want context.DeadlineExceeded", err)
			}
			if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
				t.Fatal(err)
			}
			// A cancelled context is returned at once, without a call.
			done, cancelDone := context.WithCancel(context.Background())
			cancelDone()
			if _, err := s.Take(done, dayBucket); !errors.Is(err, context.Canceled) {
				t.Fatalf("Take with a cancelled context = %v, want context.Canceled", err)
			}
			_ = s.Close() // waits for the abandoned call
			_ = client.Close()
		})
	}
}

// TestDeadRedis: with nothing listening, a Take fails promptly with an error
// naming the package, bounded by the context.
func TestDeadRedis(t *testing.T) {
	srv := redistest.New(t)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The bound counts the test process's running time (hangguard), not
	// the wall's, which a process starved by a loaded machine can overrun.
	const bound = time.Second
	result := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := s.Take(ctx, dayBucket)
		result <- err
	}()
	err, ok := hangguard.Within(result, bound)
	if !ok {
		t.Fatalf("Take on a stopped server had not returned after %s of the test's running time", bound)
	}
	if took := time.Since(start); took > bound {
		t.Logf("Take on a stopped server returned after %s on the wall clock, within %s of the test's running time", took, bound)
	}
	if err == nil {
		t.Fatal("Take on a stopped server succeeded")
	}
	_ = s.Close()
	_ = client.Close()
}

// TestCircuitBreaker: after the configured failures the breaker answers
// ErrCircuitOpen at once without sending anything; after the cool-down (on
// the injected clock) one probe goes; once Redis is back, service resumes.
// The failing calls, the calls refused and the probes are Takes, Peeks or
// Resets, each naming itself in its errors; a circuit opened by any of
// them refuses Takes too.
func TestCircuitBreaker(t *testing.T) {
	for _, tc := range []struct {
		op   string
		call func(ctx context.Context, s *redisstore.Store) error
	}{
		{"take", func(ctx context.Context, s *redisstore.Store) error {
			_, err := s.Take(ctx, dayBucket)
			return err
		}},
		{"peek", func(ctx context.Context, s *redisstore.Store) error {
			return s.Peek(ctx, make([]algorithms.Decision, 1), []algorithms.Check{dayBucket})
		}},
		{"reset", func(ctx context.Context, s *redisstore.Store) error { return s.Reset(ctx, dayBucket) }},
	} {
		if tc.op != "take" && testing.Short() {
			t.Logf("-short: %s left out (each case starts its own redis-server and stops it); run without -short", tc.op)
			continue
		}
		t.Run(tc.op, func(t *testing.T) {
			srv := redistest.New(t)
			hook := &countHook{}
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			defer client.Close()
			client.AddHook(hook)
			clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
			s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithCircuitBreaker(3, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := s.Take(ctx, dayBucket); err != nil {
				t.Fatal(err)
			}
			if err := tc.call(ctx, s); err != nil {
				t.Fatal(err)
			}
			_ = srv.Stop()
			for i := range 3 {
				if err := tc.call(ctx, s); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) || !strings.HasPrefix(err.Error(), "redisstore: "+tc.op+": ") {
					t.Fatalf("failure %d: %s = %v, want the store's error of a failed %s", i, tc.op, err, tc.op)
				}
			}
			hook.reset()
			// At once: nothing is sent (the hook sees every command and
			// pipeline before go-redis dials). A wall clock would add
			// nothing here: with the server stopped, a call that was sent
			// would fail as fast.
			for range 5 {
				if err := tc.call(ctx, s); !errors.Is(err, redisstore.ErrCircuitOpen) {
					t.Fatalf("with the circuit open, %s = %v, want ErrCircuitOpen", tc.op, err)
				}
			}
			if _, err := s.Take(ctx, dayBucket); !errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("with the circuit open, Take = %v, want ErrCircuitOpen", err)
			}
			if sent := hook.take(); len(sent) != 0 {
				t.Fatalf("the open circuit sent %v to Redis", sent)
			}
			clk.t = clk.t.Add(10 * time.Second) // cool-down over: one probe, which fails
			if err := tc.call(ctx, s); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("probe on a dead Redis = %v, want a Redis error", err)
			}
			if err := tc.call(ctx, s); !errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("after a failed probe, %s = %v, want ErrCircuitOpen", tc.op, err)
			}
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(10 * time.Second)
			if err := tc.call(ctx, s); err != nil {
				t.Fatalf("probe after Redis came back = %v", err)
			}
			d, err := s.Take(ctx, dayBucket)
			if err != nil || !d[0].Allowed {
				t.Fatalf("after a successful probe, Take = %+v, %v; want admitted", d, err)
			}
		})
	}
}

// TestRedisRestartMidway: Redis is killed and restarted while 8 goroutines
// keep taking: no panic, errors only while it is down, service resumes,
// and no goroutine leaks.
func TestRedisRestartMidway(t *testing.T) {
	srv := redistest.New(t)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond})
	s, err := redisstore.New(client, redisstore.WithCircuitBreaker(5, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ { // bounded; stopped by the test much earlier
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				_, err := s.Take(ctx, algorithms.Check{Spec: dayBucket.Spec, Key: "restart", Cost: 0})
				cancel()
				if err != nil {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	waitFor := func(cond func() bool, what string) {
		if !hangguard.Poll(10*time.Second, 5*time.Millisecond, cond) {
			close(stop)
			wg.Wait()
			t.Fatalf("timed out waiting for %s (ok %d, failed %d)", what, ok.Load(), failed.Load())
		}
	}
	waitFor(func() bool { return ok.Load() > 50 }, "first successes")
	_ = srv.Stop()
	f0 := failed.Load()
	waitFor(func() bool { return failed.Load() > f0+20 }, "failures while Redis is down")
	if err := srv.Restart(); err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	o1 := ok.Load()
	waitFor(func() bool { return ok.Load() > o1+50 }, "service to resume")
	close(stop)
	wg.Wait()
	_ = s.Close()
	_ = client.Close()
}

// clientCaseName names a subtest of a case (name) on a client that
// bounds its I/O by the context or not (go-redis's ContextTimeoutEnabled).
func clientCaseName(name string, ctxTimeouts bool) string {
	if ctxTimeouts {
		return name + "/client_ContextTimeoutEnabled"
	}
	return name + "/client_default"
}

// TestTimeoutWithoutDeadline: the middleware passes the request's context,
// which has no deadline; with WithTimeout a Take on a paused or dead Redis
// still fails promptly (go-redis alone, with its default options, retries
// and redials for seconds), with an error naming the package that wraps
// context.DeadlineExceeded, whether or not the client bounds I/O by the
// context; and no goroutine outlives Close.
func TestTimeoutWithoutDeadline(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, ctxTimeouts := range []bool{false, true} {
		for _, dead := range []bool{false, true} {
			name := "paused"
			if dead {
				name = "dead"
			}
			t.Run(clientCaseName(name, ctxTimeouts), func(t *testing.T) {
				srv := redistest.New(t)
				defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
				defer client.Close()
				warmUp(t, client, dayBucket) // not under the timeout tested
				s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				// The library loaded, a Take on the live server is one
				// round trip, well within the timeout, but on a loaded
				// machine under -race (Takes of up to 1.1 s seen; see
				// WithTimeout) not always: one the timeout ended is
				// made again, a few times. That the store decides on a
				// live server is what is checked here, not how fast
				// (dayBucket's 100 units leave room for the Takes the
				// server ran all the same).
				for try := 1; ; try++ {
					d, err := s.Take(context.Background(), dayBucket)
					if err == nil && d[0].Allowed {
						break
					}
					if try < 10 && errors.Is(err, context.DeadlineExceeded) {
						t.Logf("Take on a live server with WithTimeout, try %d: %v; again", try, err)
						continue
					}
					t.Fatalf("Take on a live server with WithTimeout = %+v, %v", d, err)
				}
				if dead {
					_ = srv.Stop()
				} else if _, err := srv.Do("CLIENT", "PAUSE", "2500", "ALL"); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					// The bound counts the test process's running time
					// (hangguard), not the wall's: a Take that waited for
					// the pause to end would take 2.5s, go-redis alone on
					// the dead one about 1.7 s, either well past it; a
					// process starved by a loaded machine overran it on
					// the wall clock (980ms seen at a load of 19 on 2
					// CPUs; 1.36 s at a load of 12 under -race).
					const bound = timeout + 900*time.Millisecond
					done := make(chan error, 1)
					start := time.Now()
					go func() {
						_, err := s.Take(context.Background(), dayBucket)
						done <- err
					}()
					err, ok := hangguard.Within(done, bound)
					if !ok {
						t.Fatalf("Take had not returned after %s of the test's running time, want about the %s timeout", bound, timeout)
					}
					if took := time.Since(start); took > bound {
						t.Logf("Take returned after %s on the wall clock, within %s of the test's running time", took, bound)
					}
					if err == nil || !errors.Is(err, context.DeadlineExceeded) && !dead {
						t.Fatalf("Take = %v, want an error wrapping context.DeadlineExceeded", err)
					}
					if !strings.HasPrefix(err.Error(), "redisstore: ") {
						t.Fatalf("Take = %q, want an error naming the package", err)
					}
				}
				_ = s.Close() // waits for the abandoned calls
				_ = client.Close()
			})
		}
	}
}
