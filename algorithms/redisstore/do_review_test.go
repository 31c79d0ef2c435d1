package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// storeCalls are Take, Peek and Reset, the three calls Store.do serves,
// each as a function of the context and the checks.
var storeCalls = []struct {
	op   string
	call func(ctx context.Context, s *redisstore.Store, cs ...algorithms.Check) error
}{
	{"take", func(ctx context.Context, s *redisstore.Store, cs ...algorithms.Check) error {
		_, err := s.Take(ctx, cs...)
		return err
	}},
	{"peek", func(ctx context.Context, s *redisstore.Store, cs ...algorithms.Check) error {
		return s.Peek(ctx, make([]algorithms.Decision, len(cs)), cs)
	}},
	{"reset", func(ctx context.Context, s *redisstore.Store, cs ...algorithms.Check) error {
		return s.Reset(ctx, cs...)
	}},
}

// TestCallsCheckInOrder: Take, Peek and Reset refuse a call in the same
// order: a caller's context already done (even on a closed store), then
// a closed store (even for an invalid check), then an invalid check
// (even with the circuit open; a Reset ignores the Cost), then the open
// circuit. An invalid check sends nothing and is no failure of Redis:
// any number of them leave a threshold-1 circuit closed.
func TestCallsCheckInOrder(t *testing.T) {
	good := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, Key: "k"}
	badSpec := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Minute}, Key: "k"}
	badCost := good
	badCost.Cost = -1
	for _, tc := range storeCalls {
		t.Run(tc.op, func(t *testing.T) {
			client, hook := countedClient(t)
			clk := &manualClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
			s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(uniquePrefix(t)),
				redisstore.WithCircuitBreaker(1, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			bg := context.Background()
			for range 3 {
				err := tc.call(bg, s, badSpec)
				if err == nil || errors.Is(err, redisstore.ErrCircuitOpen) || !strings.Contains(err.Error(), "Limit") {
					t.Fatalf("%s of an invalid Spec = %v, want the Spec's error naming Limit", tc.op, err)
				}
			}
			err = tc.call(bg, s, badCost)
			if tc.op == "reset" && err != nil {
				t.Fatalf("reset of a check with a negative Cost (which it ignores) = %v, want nil", err)
			}
			if tc.op != "reset" && (err == nil || !strings.Contains(err.Error(), "cost")) {
				t.Fatalf("%s of a negative Cost = %v, want the check's error naming the cost", tc.op, err)
			}
			if tc.op != "reset" {
				if sent := hook.take(); len(sent) != 0 {
					t.Fatalf("invalid checks sent %v", sent)
				}
			}
			hook.take()
			if err := tc.call(bg, s, good); err != nil {
				t.Fatalf("%s after invalid checks = %v: they counted as failures of Redis", tc.op, err)
			}
			hook.take()
			// Open the circuit: one failure of Redis (a connection refused).
			dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			defer dead.Close()
			ds, err := redisstore.New(dead, redisstore.WithClock(clk), redisstore.WithCircuitBreaker(1, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.call(bg, ds, good); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("%s on a refused connection = %v, want a Redis error", tc.op, err)
			}
			if err := tc.call(bg, ds, good); !errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("%s with the circuit open = %v, want ErrCircuitOpen", tc.op, err)
			}
			if err := tc.call(bg, ds, badSpec); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("%s of an invalid Spec, circuit open = %v, want the Spec's error", tc.op, err)
			}
			_ = ds.Close()
			if err := tc.call(bg, ds, badSpec); !errors.Is(err, algorithms.ErrClosed) {
				t.Fatalf("%s of an invalid Spec on a closed store = %v, want ErrClosed", tc.op, err)
			}
			cancelled, cancel := context.WithCancel(bg)
			cancel()
			if err := tc.call(cancelled, ds, good); err != context.Canceled {
				t.Fatalf("%s on a cancelled context, closed store = %v, want context.Canceled itself", tc.op, err)
			}
			if err := tc.call(cancelled, s, good); err != context.Canceled {
				t.Fatalf("%s on a cancelled context = %v, want context.Canceled itself", tc.op, err)
			}
			if sent := hook.take(); len(sent) != 0 {
				t.Fatalf("calls refused before Redis sent %v", sent)
			}
		})
	}
}

// TestDenyCacheAcrossCalls: with the deny cache, a Peek neither answers
// from it nor teaches it, and a failed Peek leaves it as it was; a Reset
// makes it forget its keys even when the DEL fails (here: a user that
// may not DEL), so that the next Take asks Redis.
func TestDenyCacheAcrossCalls(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	if err := admin.Do(ctx, "ACL", "SETUSER", "rvdonodel", "reset", "on", "nopass", "~*", "&*", "+@all", "-del").Err(); err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, Username: "rvdonodel", Password: "any"})
	defer client.Close()
	hook := &countHook{}
	client.AddHook(hook)
	clk := &manualClock{t: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix), redisstore.WithDenyCache(16))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := redisstore.New(admin, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
	k := algorithms.Check{Spec: spec, Key: "k"}
	exhaust(t, s, k)
	hook.take()
	if d := takeOne(t, s, k); d.Allowed {
		t.Fatalf("exhausted key admitted: %+v", d)
	}
	if sent := hook.take(); len(sent) != 0 {
		t.Fatalf("the denial was not answered from the cache: %v sent", sent)
	}

	// A Peek asks Redis, even of a key whose denial the cache holds.
	dst := make([]algorithms.Decision, 2)
	if err := s.Peek(ctx, dst[:1], []algorithms.Check{k}); err != nil || dst[0].Allowed {
		t.Fatalf("Peek of an exhausted key = %+v, %v; want denied", dst[0], err)
	}
	if sent := hook.take(); len(sent) != 1 {
		t.Fatalf("Peek of a key the deny cache holds sent %v, want one call to Redis", sent)
	}

	// A failed Peek (a foreign value beside k) leaves k's cached denial.
	foreign := algorithms.Check{Spec: spec, Key: "foreign"}
	if err := admin.Set(ctx, redisKeys(prefix, foreign)[0], "application data", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Peek(ctx, dst, []algorithms.Check{k, foreign}); !errors.Is(err, algorithms.ErrKeyState) || !strings.HasPrefix(err.Error(), "redisstore: peek: ") {
		t.Fatalf("Peek of a foreign value = %v, want a peek's ErrKeyState", err)
	}
	if sent := hook.take(); len(sent) == 0 {
		t.Fatal("the Peek sent nothing")
	}
	if d := takeOne(t, s, k); d.Allowed {
		t.Fatalf("exhausted key admitted after a failed Peek: %+v", d)
	}
	if sent := hook.take(); len(sent) != 0 {
		t.Fatalf("a failed Peek made the deny cache forget: the Take sent %v", sent)
	}

	// A Peek of a denied key the cache does not hold does not teach it.
	j := algorithms.Check{Spec: spec, Key: "j"}
	exhaust(t, plain, j)
	if err := s.Peek(ctx, dst[:1], []algorithms.Check{j}); err != nil || dst[0].Allowed {
		t.Fatalf("Peek of an exhausted key = %+v, %v; want denied", dst[0], err)
	}
	hook.take()
	if d := takeOne(t, s, j); d.Allowed {
		t.Fatalf("exhausted key admitted: %+v", d)
	}
	if sent := hook.take(); len(sent) != 1 {
		t.Fatalf("the Take after a Peek's denial sent %v, want one call: the Peek taught the deny cache", sent)
	}

	// A Reset that fails still forgets.
	if err := s.Reset(ctx, k); err == nil || !strings.HasPrefix(err.Error(), "redisstore: reset: NOPERM") {
		t.Fatalf("Reset as a user that may not DEL = %v, want a reset's NOPERM", err)
	}
	if sent := hook.take(); len(sent) != 1 || sent[0] != "del" {
		t.Fatalf("the Reset sent %v, want one DEL", sent)
	}
	if d := takeOne(t, s, k); d.Allowed {
		t.Fatalf("key admitted after a failed Reset: %+v", d)
	}
	if sent := hook.take(); len(sent) != 1 {
		t.Fatalf("the Take after a failed Reset sent %v, want one call: the deny cache did not forget", sent)
	}
}

// sentHook signals on sent each command its client sends once armed.
type sentHook struct {
	redistest.PassHooks
	armed atomic.Bool
	sent  chan string
}

func (h *sentHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.armed.Load() {
			h.sent <- cmd.Name()
		}
		return next(ctx, cmd)
	}
}

// TestBreakerCountsEachCallsDeadlines: for Take, Peek and Reset alike, on
// a Redis that does not answer (its writes paused; for a Peek, whose
// function is flagged no-writes and goes through such a pause, every
// command, for 2 s, which Redis's own INFO cannot report while paused: the
// Peek is sent once the client sends its command), a caller cancelling
// says nothing of Redis (the bare context.Canceled, a threshold-1 circuit
// left closed), while the store's own timeout is the call's failure (an
// error naming the call and wrapping context.DeadlineExceeded) and opens
// it; both with the client's default and with ContextTimeoutEnabled.
func TestBreakerCountsEachCallsDeadlines(t *testing.T) {
	for _, tc := range storeCalls {
		for _, ctxTimeouts := range []bool{false, true} {
			t.Run(tc.op+"/ContextTimeoutEnabled="+map[bool]string{false: "false", true: "true"}[ctxTimeouts], func(t *testing.T) {
				srv := redistest.New(t)
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: 300 * time.Millisecond})
				defer client.Close()
				warmUp(t, client, breakerCheck) // not under the 150ms timeout tested
				s, err := redisstore.New(client, redisstore.WithCircuitBreaker(1, time.Hour), redisstore.WithTimeout(150*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				bg := context.Background()
				hook := &sentHook{sent: make(chan string, 16)}
				client.AddHook(hook)
				if tc.op == "peek" {
					if _, err := srv.Do("CLIENT", "PAUSE", "2000", "ALL"); err != nil {
						t.Fatal(err)
					}
					hook.armed.Store(true)
				} else {
					pauseWrites(t, srv, 20000)
				}
				ctx, cancel := context.WithCancel(bg)
				errc := make(chan error, 1)
				go func() { errc <- tc.call(ctx, s, breakerCheck) }()
				if tc.op == "peek" {
					if name := <-hook.sent; name != "fcall" {
						t.Fatalf("the Peek sent %q, want fcall", name)
					}
				} else {
					waitBlocked(t, srv, 1)
				}
				cancel()
				if err := <-errc; err != context.Canceled {
					t.Fatalf("cancelled %s = %v, want context.Canceled itself", tc.op, err)
				}
				err = tc.call(bg, s, breakerCheck)
				if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisstore: "+tc.op+": ") {
					t.Fatalf("%s after a caller cancelled = %v, want the %s's own timeout (the circuit still closed)", tc.op, err, tc.op)
				}
				if err := tc.call(bg, s, breakerCheck); !errors.Is(err, redisstore.ErrCircuitOpen) {
					t.Fatalf("%s after its timeout (breaker of 1 failure) = %v, want ErrCircuitOpen", tc.op, err)
				}
				if tc.op == "peek" {
					return // the pause ends on its own (UNPAUSE waits for it)
				}
				if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
