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
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// TestMismatchNamesTheMethod: a TakeInto or a Peek whose dst does not have
// one element per check is refused before Redis is contacted, with an
// error naming the method the caller called.
func TestMismatchNamesTheMethod(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := []algorithms.Check{everyKind("k")[0]}
	dst := make([]algorithms.Decision, 2)
	for name, call := range map[string]func() error{
		"TakeInto": func() error { return s.TakeInto(ctx, dst, checks) },
		"Peek":     func() error { return s.Peek(ctx, dst, checks) },
	} {
		want := "redisstore: " + name + ": 2 decisions for 1 checks"
		if err := call(); err == nil || err.Error() != want {
			t.Errorf("%s with 2 decisions for 1 check = %v, want %q", name, err, want)
		}
	}
}

// holdTag is a go-redis hook that holds every command naming a key of the
// hash tag until release is closed, whatever the command's context: a node
// that does not answer, seen by a client that does not bound its I/O by
// the context (ContextTimeoutEnabled off, go-redis's default).
type holdTag struct {
	redistest.PassHooks
	tag     string
	release chan struct{}
}

func (h *holdTag) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.Contains(s, h.tag) {
				<-h.release
				break
			}
		}
		return next(ctx, cmd)
	}
}

// TestContextDeadlineClientsNewGuards: on a client that does not bound its
// I/O by the context (ContextTimeoutEnabled off, go-redis's default), a
// Take whose node does not answer still returns the context's error at its
// deadline, as TestContextDeadlineSlowRedis checks for a *redis.Client: New
// guards a *redis.ClusterClient's calls, and those of a client type it
// does not know (here one embedding a *redis.Client), whose options it
// cannot read, too.
func TestContextDeadlineClientsNewGuards(t *testing.T) {
	type ownClient struct{ *redis.Client }
	for name, client := range map[string]interface {
		redis.UniversalClient
		AddHook(redis.Hook)
	}{
		"cluster":    sharedCluster(t),
		"own_client": ownClient{newClient(t)},
	} {
		t.Run(name, func(t *testing.T) {
			hold := &holdTag{tag: "{slow}", release: make(chan struct{})}
			client.AddHook(hold)
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			// A watchdog releases the call should the Take wait for it, so
			// that the test fails rather than hangs.
			var watchdog atomic.Bool
			timer := time.AfterFunc(10*time.Second, func() { watchdog.Store(true); close(hold.release) })
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err = s.Take(ctx, algorithms.Check{Spec: dayBucket.Spec, Key: "slow"})
			if timer.Stop() {
				close(hold.release)
			}
			if watchdog.Load() {
				t.Errorf("Take on a node that does not answer returned only once the call was released (%v), want the context's error at its 100ms deadline", err)
			} else if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Take on a node that does not answer = %v, want context.DeadlineExceeded", err)
			}
			_ = s.Close() // waits for the released call
		})
	}
}

// TestResetValidatesSpecsFirst: a Reset validates every check's Spec before
// it deletes anything (an invalid one is ErrInvalidSpec, and the valid
// check's state stays), and ignores the Cost (one over the capacity is no
// error of a Reset).
func TestResetValidatesSpecsFirst(t *testing.T) {
	client := newClient(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	one := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}
	if d, err := s.Take(ctx, one); err != nil || !d[0].Allowed {
		t.Fatalf("first Take = %+v, %v; want admitted", d, err)
	}
	bad := one
	bad.Spec.Limit = 0
	if err := s.Reset(ctx, one, bad); !errors.Is(err, algorithms.ErrInvalidSpec) {
		t.Fatalf("Reset with a Limit 0 spec = %v, want ErrInvalidSpec", err)
	}
	if d, err := s.Take(ctx, one); err != nil || d[0].Allowed {
		t.Fatalf("Take after the refused Reset = %+v, %v; want denied (nothing deleted)", d, err)
	}
	costly := one
	costly.Cost = 99
	if err := s.Reset(ctx, costly); err != nil {
		t.Fatalf("Reset of a check of Cost 99 over capacity 1 = %v, want the Cost ignored", err)
	}
	if d, err := s.Take(ctx, one); err != nil || !d[0].Allowed {
		t.Errorf("Take after the Reset = %+v, %v; want admitted", d, err)
	}
}

// TestCloseRacingRefund: as TestCloseRacingEveryCall, a Refund that
// had passed its check of closed when Close ran (paused in the injected
// clock's Now), on a client without ContextTimeoutEnabled and a context
// with a deadline, must not then start its call in a goroutine Close no
// longer waits for: it returns ErrClosed, having sent nothing, and a
// second Close returns.
func TestCloseRacingRefund(t *testing.T) {
	var closed atomic.Bool
	hook := &sentAfter{closed: &closed}
	client := newClient(t)
	client.AddHook(hook)
	clk := &pausingClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC), entered: make(chan struct{}), goOn: make(chan struct{})}
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}, Key: "k"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ds, err := s.Take(ctx, check) // loads the library
	if err != nil || !ds[0].Allowed {
		t.Fatalf("Take = %+v, %v; want admitted", ds, err)
	}
	clk.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		done <- s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{check}, ds, 0)
	}()
	<-clk.entered // the Refund is past its check of closed
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)
	close(clk.goOn)
	err = <-done
	if n := hook.n.Load(); n != 0 || !errors.Is(err, algorithms.ErrClosed) {
		t.Fatalf("a Refund under way when Close returned sent %d commands to Redis and returned %v; want none sent and ErrClosed", n, err)
	}
	// Close is idempotent: the refused Refund left no lock held that a
	// second Close would wait for.
	again := make(chan error, 1)
	go func() { again <- s.Close() }()
	if err := hangguard.Await(t, again, 10*time.Second, "second Close did not return"); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

// TestCloseWaitsForAbandonedCalls: a Take abandoned at its context's
// deadline (its call held in a goroutine of the store, the client not
// bounding I/O by the context) is still running when Close is called;
// Close returns only once that call has ended.
func TestCloseWaitsForAbandonedCalls(t *testing.T) {
	client := newClient(t)
	hold := &holdTag{tag: "{slow}", release: make(chan struct{})}
	var ended atomic.Bool
	client.AddHook(endedHook{&ended, "{slow}"}) // added first: sees the reply once hold lets the call go
	client.AddHook(hold)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Take(ctx, algorithms.Check{Spec: dayBucket.Spec, Key: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on a node that does not answer = %v, want context.DeadlineExceeded", err)
	}
	// Release the held call once Close has begun, which a Take of another
	// key shows by returning ErrClosed.
	go func() {
		other := algorithms.Check{Spec: dayBucket.Spec, Key: "other"}
		for {
			if _, err := s.Take(context.Background(), other); errors.Is(err, algorithms.ErrClosed) {
				break
			}
		}
		close(hold.release)
	}()
	_ = s.Close()
	if !ended.Load() {
		t.Error("Close returned while the abandoned call was still running")
	}
}

// endedHook sets ended once a command naming a key of the hash tag has
// had its reply.
type endedHook struct {
	ended *atomic.Bool
	tag   string
}

func (h endedHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h endedHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h endedHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.Contains(s, h.tag) {
				h.ended.Store(true)
			}
		}
		return err
	}
}
