package redisstore_test

import (
	"context"
	"fmt"
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

// loadBound bounds every wait of the library-load tests: a failure bound,
// never a time the tests pass.
const loadBound = 10 * time.Second

// leaderKey marks the context of the call a test wants to lead the load.
type leaderKey struct{}

// loadHook counts the library loads a client sends (FUNCTION LOAD) and
// the script calls that find the function missing, and holds every load
// until want calls have found it missing: every first call has then
// failed its FCALL before any load ends, so each of them would load the
// library unless they share one load. With leaderGivesUp, the first load,
// if its call's context is marked with leaderKey, is not sent: once the
// others have found the function missing, cancel is called and the load
// returns its context's error (its caller gave up). With leaderPanics,
// the first load panics instead (a client hook's bug).
type loadHook struct {
	redistest.PassHooks
	want          int64
	leaderGivesUp bool
	leaderPanics  bool
	cancel        context.CancelFunc

	loads      atomic.Int64 // FUNCTION LOADs that reached the server
	attempts   atomic.Int64 // FUNCTION LOADs the store began
	missing    atomic.Int64
	allMissing chan struct{}
	leading    chan struct{} // closed when the first load is held
}

func newLoadHook(want int) *loadHook {
	return &loadHook{want: int64(want), allMissing: make(chan struct{}), leading: make(chan struct{})}
}

func isFunctionLoad(cmd redis.Cmder) bool {
	args := cmd.Args()
	if cmd.Name() != "function" || len(args) < 2 {
		return false
	}
	sub, _ := args[1].(string)
	return strings.EqualFold(sub, "load")
}

func (h *loadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isFunctionLoad(cmd) {
			first := h.attempts.Add(1) == 1
			if first {
				close(h.leading)
			}
			select {
			case <-h.allMissing:
			case <-time.After(loadBound):
			}
			if first {
				if h.leaderPanics {
					panic("hook bug in FUNCTION LOAD")
				}
				if h.leaderGivesUp && ctx.Value(leaderKey{}) != nil {
					h.cancel()
					<-ctx.Done()
					cmd.SetErr(ctx.Err())
					return ctx.Err()
				}
			}
			err := next(ctx, cmd)
			h.loads.Add(1)
			return err
		}
		err := next(ctx, cmd)
		if cmd.Name() == "fcall" && err != nil && strings.Contains(err.Error(), "Function not found") {
			if h.missing.Add(1) == h.want {
				close(h.allMissing)
			}
		}
		return err
	}
}

// firstCalls makes one Take of its own key on s in each of n goroutines,
// the first one on ctx0, the others on context.Background(), and returns
// their errors and what each one recovered if it panicked; it fails t if
// any has not returned within 2·loadBound. With lead, the others start
// once the first one's load is held by h (it leads the load).
func firstCalls(t *testing.T, s *redisstore.Store, n int, ctx0 context.Context, h *loadHook, lead bool) ([]error, []any) {
	t.Helper()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		ctx := context.Background()
		if i == 0 {
			ctx = ctx0
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			_, errs[i] = s.Take(ctx, algorithms.Check{Spec: spec, Key: fmt.Sprintf("user-%d", i)})
		}()
		if i == 0 && lead {
			if _, ok := hangguard.Within(h.leading, loadBound); !ok {
				t.Errorf("the first call had not begun to load the library after %s of the test's running time", loadBound)
			}
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if _, ok := hangguard.Within(done, 2*loadBound); !ok {
		t.Fatalf("%d first calls had not all returned after %s of the test's running time", n, 2*loadBound)
	}
	return errs, panics
}

// TestRSReview2ConcurrentFirstCallsLoadOnce: n calls that find the library
// missing at the same time (the first calls of a store on a fresh server,
// and again after FUNCTION FLUSH) load it once: one of them loads it, the
// others wait for that load and call the function again. Every call
// succeeds. Before, each of them sent the library (about 120 kB, compiled
// by the server each time): n loads.
func TestRSReview2ConcurrentFirstCallsLoadOnce(t *testing.T) {
	const n = 8
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("fresh", ctxTimeouts), func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			for round, what := range []string{"on a fresh server", "after FUNCTION FLUSH"} {
				h := newLoadHook(n)
				client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
				client.AddHook(h)
				s, err := redisstore.New(client, redisstore.WithTimeout(2*loadBound))
				if err != nil {
					t.Fatal(err)
				}
				errs, panics := firstCalls(t, s, n, context.Background(), h, false)
				for i := range n {
					if errs[i] != nil || panics[i] != nil {
						t.Errorf("%s: first call %d = %v (panic %v), want it to succeed", what, i, errs[i], panics[i])
					}
				}
				if got := h.loads.Load(); got != 1 {
					t.Errorf("%s: %d first calls that all found the function missing loaded the library %d times, want once", what, n, got)
				}
				_ = s.Close()
				_ = client.Close()
				if round == 0 {
					if _, err := srv.Do("FUNCTION", "FLUSH"); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestRSReview2LoaderGivesUp: when the call that loads the library for
// the others gives up (its caller cancels it during the load), the calls
// waiting for that load do not fail for it: one of them loads the library,
// once, and every one of them succeeds; the caller that gave up gets its
// context.Canceled.
func TestRSReview2LoaderGivesUp(t *testing.T) {
	const n = 6
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("cancelled", ctxTimeouts), func(t *testing.T) {
			srv := redistest.New(t)
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
			defer client.Close()
			ctx0, cancel := context.WithCancel(context.WithValue(context.Background(), leaderKey{}, true))
			defer cancel()
			h := newLoadHook(n)
			h.leaderGivesUp, h.cancel = true, cancel
			client.AddHook(h)
			s, err := redisstore.New(client, redisstore.WithTimeout(2*loadBound))
			if err != nil {
				t.Fatal(err)
			}
			errs, panics := firstCalls(t, s, n, ctx0, h, true)
			for i := range n {
				if panics[i] != nil {
					t.Errorf("first call %d panicked: %v", i, panics[i])
				}
			}
			for i := 1; i < n; i++ {
				if errs[i] != nil {
					t.Errorf("first call %d = %v, want it to succeed (the call that gave up was another's)", i, errs[i])
				}
			}
			if errs[0] != context.Canceled {
				t.Errorf("the call that gave up = %v, want context.Canceled", errs[0])
			}
			if got := h.loads.Load(); got != 1 {
				t.Errorf("after the loading call gave up, the library was loaded %d times, want once", got)
			}
			_ = s.Close()
			_ = client.Close()
		})
	}
}

// TestRSReview2LoaderPanics: when a client hook panics in the load of the
// call that loads the library for the others, that call panics (on its
// caller's goroutine) and the calls waiting for its load neither hang nor
// fail: one of them loads the library, and each succeeds.
func TestRSReview2LoaderPanics(t *testing.T) {
	const n = 6
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("panic", ctxTimeouts), func(t *testing.T) {
			srv := redistest.New(t)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts})
			defer client.Close()
			h := newLoadHook(n)
			h.leaderPanics = true
			client.AddHook(h)
			s, err := redisstore.New(client, redisstore.WithTimeout(2*loadBound))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			errs, panics := firstCalls(t, s, n, context.Background(), h, true)
			panicked := 0
			for i := range n {
				switch {
				case panics[i] != nil:
					panicked++
					if panics[i] != "hook bug in FUNCTION LOAD" {
						t.Errorf("first call %d panicked with %v, want the hook's panic", i, panics[i])
					}
				case errs[i] != nil:
					t.Errorf("first call %d = %v, want it to succeed, or to panic with the hook", i, errs[i])
				}
			}
			if panicked != 1 {
				t.Errorf("%d first calls panicked, want 1 (the one whose load met the hook's bug)", panicked)
			}
		})
	}
}

// holdMissingHook holds the reply of the first script call on a context
// marked with leaderKey that finds the function missing until release is
// closed (held is closed when it is held).
type holdMissingHook struct {
	redistest.PassHooks
	held, release chan struct{}
	once          sync.Once
}

func (h *holdMissingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "fcall" && err != nil && strings.Contains(err.Error(), "Function not found") && ctx.Value(leaderKey{}) != nil {
			h.once.Do(func() {
				close(h.held)
				select {
				case <-h.release:
				case <-time.After(loadBound):
				}
			})
		}
		return err
	}
}

// TestRSReview2LoadedThenFlushedMeanwhile: a call X finds the function
// missing; before X goes on, another call loads the library, and FUNCTION
// FLUSH removes it again. X, which takes the other call's load for its
// own (its FCALL may have reached the server before that load), finds the
// function missing once more: it loads the library then, rather than
// taking the server for one a redirection reached (which would run every
// call as the script, loading nothing, for 10 s).
func TestRSReview2LoadedThenFlushedMeanwhile(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	h := &holdMissingHook{held: make(chan struct{}), release: make(chan struct{})}
	client.AddHook(h)
	s, err := redisstore.New(client, redisstore.WithTimeout(2*loadBound))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	xDone := make(chan error, 1)
	go func() {
		_, err := s.Take(context.WithValue(context.Background(), leaderKey{}, true), algorithms.Check{Spec: spec, Key: "x"})
		xDone <- err
	}()
	if _, ok := hangguard.Within(h.held, loadBound); !ok {
		t.Fatalf("X's call had not found the function missing after %s of the test's running time", loadBound)
	}
	if _, err := s.Take(context.Background(), algorithms.Check{Spec: spec, Key: "y"}); err != nil { // loads the library
		t.Fatal(err)
	}
	if _, err := srv.Do("FUNCTION", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	xErr, ok := hangguard.Within(xDone, loadBound)
	if !ok {
		t.Fatalf("X had not returned after %s of the test's running time", loadBound)
	}
	if xErr != nil {
		t.Fatalf("X = %v", xErr)
	}
	list, err := srv.Do("FUNCTION", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "ratekeeper_") {
		t.Errorf("after X found the function missing again, the server holds no library (FUNCTION LIST: %q): X did not load it", list)
	}
}
