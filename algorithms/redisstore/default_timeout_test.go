package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// defaultSlack is how far past redisstore.DefaultTimeout a Take may
// return on a loaded machine (980ms seen at a load of 19 on 2 CPUs for
// TestTimeoutWithoutDeadline's 100ms); go-redis alone, with its default
// options, gives up on a paused Redis after about 10 s.
const defaultSlack = time.Second

// takeBounded runs s.Take(ctx, c) and returns its duration and error, or
// fails t if it has not returned within bound of the test process's
// running time (hangguard), not the wall's, which a process starved by a
// loaded machine can overrun (it is then left to end).
func takeBounded(t *testing.T, s *redisstore.Store, ctx context.Context, c algorithms.Check, bound time.Duration) (time.Duration, error) {
	t.Helper()
	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := s.Take(ctx, c)
		done <- result{err, time.Since(start)}
	}()
	r, ok := hangguard.Within(done, bound)
	if !ok {
		t.Fatalf("Take on a Redis that does not answer had not returned after %s of the test's running time", bound)
	}
	if r.took > bound {
		t.Logf("Take returned after %s on the wall clock, within %s of the test's running time", r.took, bound)
	}
	return r.took, r.err
}

// TestDefaultTimeoutPausedRedis: a store built with no option, on a client
// with go-redis's default options (or with ContextTimeoutEnabled), bounds
// every Take by DefaultTimeout: on a Redis that answers nothing (writes
// paused for 30 s) and a context without deadline (the middleware's), a
// Take fails within it, with the store's error wrapping
// context.DeadlineExceeded, where go-redis alone waits out its read
// timeouts and retries (about 10 s).
func TestDefaultTimeoutPausedRedis(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("paused", ctxTimeouts), func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
			defer client.Close()
			warmUp(t, client, dayBucket) // the library loaded: one round trip per Take
			s, err := redisstore.New(client)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if d, err := s.Take(context.Background(), dayBucket); err != nil || !d[0].Allowed {
				t.Fatalf("Take on a live server = %+v, %v", d, err)
			}
			pauseWrites(t, srv, 30000)
			for i := range 2 {
				took, err := takeBounded(t, s, context.Background(), dayBucket, redisstore.DefaultTimeout+defaultSlack)
				want := "redisstore: take: no reply from Redis within " + redisstore.DefaultTimeout.String()
				if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("Take %d on a paused server = %v, want %q... wrapping context.DeadlineExceeded", i, err, want)
				}
				if took < redisstore.DefaultTimeout {
					t.Fatalf("Take %d failed after %s, before the %s default timeout", i, took, redisstore.DefaultTimeout)
				}
			}
			if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
				t.Fatal(err)
			}
			_ = s.Close() // waits for the abandoned calls
			_ = client.Close()
		})
	}
}

// TestDefaultTimeoutThroughMiddleware: through a net/http ServeMux, a
// middleware on a store built with no option answers a request by its
// failure mode (here FailClosed: 503) within DefaultTimeout when Redis
// answers nothing, and its error handler gets the store's error wrapping
// context.DeadlineExceeded.
func TestDefaultTimeoutThroughMiddleware(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	errs := make(chan error, 1)
	m, err := middleware.New(s, []*policy.Policy{policy.Must(policy.PerMinute("per-minute", 5, keyfunc.Must(keyfunc.IP())))},
		middleware.OnStoreError(middleware.FailClosed(time.Second)),
		middleware.WithErrorHandler(func(r *http.Request, err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /hello", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	})))
	get := func() (*httptest.ResponseRecorder, time.Duration) {
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/hello", nil))
		}()
		// The bound counts the test process's running time (hangguard),
		// not the wall's, which a process starved by a loaded machine
		// can overrun.
		const bound = redisstore.DefaultTimeout + defaultSlack
		if _, ok := hangguard.Within(done, bound); !ok {
			t.Fatalf("a request on a Redis that does not answer had no answer after %s of the test's running time", bound)
		}
		took := time.Since(start)
		if took > bound {
			t.Logf("a request was answered after %s on the wall clock, within %s of the test's running time", took, bound)
		}
		return rec, took
	}
	if rec, _ := get(); rec.Code != http.StatusOK {
		t.Fatalf("status %d on a live Redis, want 200", rec.Code)
	}
	pauseWrites(t, srv, 30000)
	rec, took := get()
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d after %s on a paused Redis, want 503 (FailClosed)", rec.Code, took)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no reply from Redis within "+redisstore.DefaultTimeout.String()) {
			t.Fatalf("error handler got %q, want the store's default timeout wrapping context.DeadlineExceeded", err)
		}
	default:
		t.Fatal("the error handler was not called")
	}
	if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
		t.Fatal(err)
	}
}

// TestWithTimeoutZeroMeansNone: WithTimeout(0) turns the default off: a
// Take on a paused Redis then runs until its caller's deadline, set past
// DefaultTimeout, and returns the caller's context.DeadlineExceeded as
// is, not the store's error.
func TestWithTimeoutZeroMeansNone(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithTimeout(0))
	if err != nil {
		t.Fatalf("New with WithTimeout(0) = %v, want a store with no timeout of its own", err)
	}
	defer s.Close()
	pauseWrites(t, srv, 30000)
	callerTimeout := redisstore.DefaultTimeout + 500*time.Millisecond
	// The caller's deadline counts from here, before takeBounded's own
	// start (1.3 ms later once under load: "failed after 2.498736247s,
	// before its caller's 2.5s deadline").
	set := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), callerTimeout)
	defer cancel()
	_, err = takeBounded(t, s, ctx, dayBucket, callerTimeout+defaultSlack)
	if err != context.DeadlineExceeded {
		t.Fatalf("Take with WithTimeout(0) on a paused server = %v, want the caller's context.DeadlineExceeded as is", err)
	}
	if took := time.Since(set); took < callerTimeout {
		t.Fatalf("Take with WithTimeout(0) failed %s after its caller's context was made, before its %s deadline", took, callerTimeout)
	}
	if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultTimeoutSparesABusyRedis: the default timeout never fires on a
// healthy Redis under load: 32 goroutines each make 60 Takes with stores
// built with no option on a fresh server (the first calls load the
// library, concurrently) and on the shared Cluster (cross-slot Takes, a
// third of them denied on one slot and undone on the other), under -race
// on a machine other tests load; every Take must succeed. The slowest
// Takes are logged (see DefaultTimeout's documentation for the figures).
func TestDefaultTimeoutSparesABusyRedis(t *testing.T) {
	srv := redistest.New(t)
	standalone := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer standalone.Close()
	clients := map[string]redis.UniversalClient{"standalone": standalone}
	if !testing.Short() {
		clients["cluster"] = sharedCluster(t)
	} else {
		t.Log("-short: the Cluster case left out (it starts the shared cluster); run without -short")
	}
	for name, client := range clients {
		t.Run(name, func(t *testing.T) {
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const goroutines, takes = 32, 60
			shared := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: goroutines * takes * 2 / 3, Window: time.Hour}, Key: "ip-1"}
			var (
				mu      sync.Mutex
				slowest []time.Duration
				failed  []error
				wg      sync.WaitGroup
			)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					own := []algorithms.Check{
						{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1000, Window: time.Minute}, Key: fmt.Sprintf("user-%d", g)},
						{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1000, Window: time.Minute}, Key: fmt.Sprintf("user-%d", g)},
						shared,
					}
					var worst time.Duration
					for range takes {
						start := time.Now()
						_, err := s.Take(context.Background(), own...)
						worst = max(worst, time.Since(start))
						if err != nil {
							mu.Lock()
							failed = append(failed, err)
							mu.Unlock()
						}
					}
					mu.Lock()
					slowest = append(slowest, worst)
					mu.Unlock()
				}()
			}
			wg.Wait()
			worst := time.Duration(0)
			for _, d := range slowest {
				worst = max(worst, d)
			}
			t.Logf("%s: %d Takes of 3 checks by %d goroutines, the slowest %s", name, goroutines*takes, goroutines, worst)
			if len(failed) > 0 {
				t.Fatalf("%d of %d Takes on a healthy Redis failed under the default timeout; the first: %v", len(failed), goroutines*takes, failed[0])
			}
		})
	}
}
