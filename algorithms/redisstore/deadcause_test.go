package redisstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// TestTimeoutNamesRefusedConnection: with Redis down (nothing listens on
// its port: connection refused), a Take bounded by WithTimeout fails at the
// timeout, as before, with an error that still wraps
// context.DeadlineExceeded and now also names the refused dial (errors.Is
// syscall.ECONNREFUSED): go-redis redials in the background and retries
// while the store's deadline passes, so the deadline alone would not tell
// "Redis is down" from "Redis is slow". Whether the client had a
// connection before (warm) or never reached Redis (cold), and whether or
// not it bounds I/O by the context. A paused Redis (slow, not down) names
// no dial: see TestTimeoutPausedNamesNoDial.
func TestTimeoutNamesRefusedConnection(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, ctxTimeouts := range []bool{false, true} {
		for _, warm := range []bool{false, true} {
			name := "cold"
			if warm {
				name = "warm"
			}
			t.Run(clientCaseName(name, ctxTimeouts), func(t *testing.T) {
				srv := redistest.New(t)
				defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
				defer client.Close()
				if warm {
					warmUp(t, client, dayBucket)
				}
				s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_ = srv.Stop() // a closed port: every dial is refused
				for i := range 3 {
					// The bound counts the test process's running time
					// (hangguard), not the wall's, which a process starved
					// by a loaded machine can overrun.
					const bound = timeout + 900*time.Millisecond
					result := make(chan error, 1)
					start := time.Now()
					go func() {
						_, err := s.Take(context.Background(), dayBucket)
						result <- err
					}()
					err, ok := hangguard.Within(result, bound)
					if !ok {
						t.Fatalf("Take %d on a stopped server had not returned after %s of the test's running time, want about the %s timeout", i, bound, timeout)
					}
					if took := time.Since(start); took > bound {
						t.Logf("Take %d returned after %s on the wall clock, within %s of the test's running time", i, took, bound)
					}
					if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisstore: take: no reply from Redis within 200ms") {
						t.Fatalf("Take %d on a stopped server = %v, want the store's timeout wrapping context.DeadlineExceeded", i, err)
					}
					if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "connection refused") {
						t.Fatalf("Take %d on a stopped server = %q, want it to name the refused connection (errors.Is syscall.ECONNREFUSED)", i, err)
					}
				}
				_ = s.Close()
				_ = client.Close()
			})
		}
	}
}

// TestTimeoutPausedNamesNoDial: a paused Redis (up, answering nothing) is
// slow, not down: the store's timeout names no dial, though the client
// dialed (and was refused) before Redis came back.
func TestTimeoutPausedNamesNoDial(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = srv.Stop()
	if _, err := s.Take(context.Background(), dayBucket); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Take on a stopped server = %v, want the refused connection named", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	warmUp(t, client, dayBucket) // a dial that succeeds
	pauseWrites(t, srv, 2500)
	_, err = s.Take(context.Background(), dayBucket)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on a paused server = %v, want context.DeadlineExceeded", err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "dial") {
		t.Fatalf("Take on a paused server = %q, names a dial: Redis is up", err)
	}
}

// TestTimeoutNamesRefusedConnectionCluster: as
// TestTimeoutNamesRefusedConnection, on a Cluster whose nodes all stopped:
// the dials are its node clients', which the store watches too.
func TestTimeoutNamesRefusedConnectionCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster; run without -short")
	}
	const timeout = 200 * time.Millisecond
	cl := redistest.NewCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	warmUp(t, client, dayBucket)
	cl.Stop()
	for i := range 3 {
		// The bound counts the test process's running time
		// (hangguard), not the wall's, which a process starved
		// by a loaded machine can overrun.
		const bound = timeout + 900*time.Millisecond
		result := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := s.Take(context.Background(), dayBucket)
			result <- err
		}()
		err, ok := hangguard.Within(result, bound)
		if !ok {
			t.Fatalf("Take %d on a stopped cluster had not returned after %s of the test's running time, want about the %s timeout", i, bound, timeout)
		}
		if took := time.Since(start); took > bound {
			t.Logf("Take %d returned after %s on the wall clock, within %s of the test's running time", i, took, bound)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisstore: take: no reply from Redis within 200ms") {
			t.Fatalf("Take %d on a stopped cluster = %v, want the store's timeout wrapping context.DeadlineExceeded", i, err)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("Take %d on a stopped cluster = %q, want it to name the refused connection (errors.Is syscall.ECONNREFUSED)", i, err)
		}
	}
}

// TestMiddlewareErrorHandlerNamesRefusedConnection: what the middleware's
// error handler receives for a request decided on a stopped Redis (a
// store with WithTimeout, through a net/http ServeMux) names the refused
// connection, and matches both syscall.ECONNREFUSED and
// context.DeadlineExceeded; the request goes on (fail open).
func TestMiddlewareErrorHandlerNamesRefusedConnection(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	warmUp(t, client, dayBucket)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	errs := make(chan error, 1)
	m, err := middleware.New(s, []*policy.Policy{policy.Must(policy.PerMinute("per-minute", 5, keyfunc.Must(keyfunc.IP())))},
		middleware.WithErrorHandler(func(r *http.Request, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /hello", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	})))
	_ = srv.Stop()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/hello", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d on a stopped Redis, want 200 (fail open)", rec.Code)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("error handler got %q, want it to name the refused connection and wrap context.DeadlineExceeded", err)
		}
	default:
		t.Fatal("the error handler was not called")
	}
}
