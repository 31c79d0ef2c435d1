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
)

// TestCancelledCallEndsAtItsReply: a Take whose caller cancels it while
// Redis holds it (writes paused). With a client that does not bound its
// I/O by the context, the Take returns the context's own error at once;
// with ContextTimeoutEnabled, which bounds it by a deadline only, the call
// ends at its reply and returns the decision Redis made (it consumed).
// Either way the call ran once Redis resumed: an error does not prove
// nothing was consumed.
func TestCancelledCallEndsAtItsReply(t *testing.T) {
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "cancel"}
	for _, cte := range []bool{false, true} {
		srv := redistest.New(t)
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: cte, MaxRetries: -1})
		defer client.Close()
		s, err := redisstore.New(client)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.Take(ctx, check); err != nil { // loads the library
			t.Fatal(err)
		}
		pauseWrites(t, srv, 20000)
		cctx, cancel := context.WithCancel(ctx)
		type result struct {
			ds  []algorithms.Decision
			err error
		}
		done := make(chan result, 1)
		go func() {
			ds, err := s.Take(cctx, check)
			done <- result{ds, err}
		}()
		waitBlocked(t, srv, 1)
		cancel()
		if !cte {
			if r := <-done; r.err != context.Canceled {
				t.Errorf("default client: cancelled Take = %+v, %v; want the context's own error, context.Canceled", r.ds, r.err)
			}
		}
		if _, err := srv.Do("CLIENT", "UNPAUSE"); err != nil {
			t.Fatal(err)
		}
		if cte {
			if r := <-done; r.err != nil || len(r.ds) != 1 || !r.ds[0].Allowed || r.ds[0].Remaining != 3 {
				t.Errorf("ContextTimeoutEnabled: Take cancelled in flight = %+v, %v; want its reply, admitted with 3 left", r.ds, r.err)
			}
		}
		if err := s.Close(); err != nil { // waits for an abandoned call
			t.Fatal(err)
		}
		probe, err := redisstore.New(client)
		if err != nil {
			t.Fatal(err)
		}
		peek := make([]algorithms.Decision, 1)
		if err := probe.Peek(ctx, peek, []algorithms.Check{check}); err != nil || peek[0].Remaining != 3 {
			t.Errorf("ContextTimeoutEnabled %v: after the cancelled Take, Peek = %+v, %v; want 3 left (the call ran)", cte, peek, err)
		}
	}
}

// redisReplied reports whether err wraps an error Redis replied whose text
// begins with prefix.
func redisReplied(err error, prefix string) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), prefix)
}

// TestOOMIsAFailureOfRedis: a Redis at its maxmemory (noeviction) refuses
// the store's writes with OOM. A Take that would consume fails with that
// error, named as the store's, writes nothing and is no key's fault (not
// algorithms.ErrKeyState); as a function every Take fails so (FCALL of a
// function that may write is refused whole), as a script a denied Take,
// which writes nothing, is still answered. The breaker counts the
// failures and opens; once memory is back, its probe closes it, and the
// key's count shows only the Takes that were admitted.
func TestOOMIsAFailureOfRedis(t *testing.T) {
	srv := redistest.New(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.Do(ctx, "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Hour}
	for _, name := range []string{"function", "script"} {
		opts := &redis.Options{Addr: srv.Addr, MaxRetries: -1}
		if name == "script" {
			opts.Username, opts.Password = "nofunctions", "any"
		}
		client := redis.NewClient(opts)
		defer client.Close()
		clk := &manualClock{t: corruptT0}
		prefix := "oom" + name
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk), redisstore.WithCircuitBreaker(2, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		full := algorithms.Check{Spec: spec, Key: "full"}
		if _, err := s.Take(ctx, full, full); err != nil { // full: denied from now on
			t.Fatal(err)
		}
		open := algorithms.Check{Spec: spec, Key: "open"}
		if _, err := s.Take(ctx, open); err != nil { // one of two used
			t.Fatal(err)
		}
		if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			t.Fatal(err)
		}
		denied, err := s.Take(ctx, full)
		if name == "script" {
			if err != nil || denied[0].Allowed {
				t.Errorf("%s: at maxmemory, a denied Take = %+v, %v; want it denied (it writes nothing)", name, denied, err)
			}
		} else if !redisReplied(err, "OOM") {
			t.Errorf("%s: at maxmemory, a Take = %+v, %v; want Redis's OOM error", name, denied, err)
		}
		fails := 2 // the breaker's threshold
		if name == "function" {
			fails-- // the denied Take failed too
		}
		for i := range fails {
			ds, err := s.Take(ctx, open)
			if !redisReplied(err, "OOM") || !strings.HasPrefix(err.Error(), "redisstore: take: ") || errors.Is(err, algorithms.ErrKeyState) {
				t.Fatalf("%s: at maxmemory, admitting Take %d = %+v, %v; want the store's error wrapping Redis's OOM, no key's fault", name, i, ds, err)
			}
		}
		if _, err := s.Take(ctx, open); !errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Errorf("%s: after two OOM failures, Take = %v; want ErrCircuitOpen", name, err)
		}
		if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(10 * time.Second)
		ds, err := s.Take(ctx, open)
		if err != nil || !ds[0].Allowed || ds[0].Remaining != 0 {
			t.Errorf("%s: the probe once memory is back = %+v, %v; want admitted with 0 left (the OOM Takes consumed nothing)", name, ds, err)
		}
	}
}

// TestReadOnlyReplicaIsAFailureOfRedis: a store on a read-only replica
// (misconfigured, or a master demoted under it) gets READONLY: every Take
// fails with that error, named as the store's and no key's fault, whether
// the replica has the library or not (its load is refused too), and
// nothing reaches the master; the breaker counts the failures.
func TestReadOnlyReplicaIsAFailureOfRedis(t *testing.T) {
	master, replica := replicaPair(t)
	ctx := context.Background()
	mc := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer mc.Close()
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer rc.Close()
	clk := &manualClock{t: corruptT0}
	s, err := redisstore.New(rc, redisstore.WithClock(clk), redisstore.WithCircuitBreaker(2, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Hour}, Key: "replica"}
	for i := range 2 {
		if i == 1 {
			// The library on the master, and so on the replica.
			m, err := redisstore.New(mc, redisstore.WithPrefix("elsewhere"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Take(ctx, c); err != nil {
				t.Fatal(err)
			}
			if !hangguard.Poll(10*time.Second, 5*time.Millisecond, func() bool {
				libs, err := rc.FunctionList(ctx, redis.FunctionListQuery{}).Result()
				return err == nil && len(libs) == 1
			}) {
				t.Fatal("the library did not reach the replica in 10s")
			}
		}
		ds, err := s.Take(ctx, c)
		if !redisReplied(err, "READONLY") || !strings.HasPrefix(err.Error(), "redisstore: take: ") || errors.Is(err, algorithms.ErrKeyState) {
			t.Fatalf("Take %d on a replica = %+v, %v; want the store's error wrapping Redis's READONLY, no key's fault", i, ds, err)
		}
	}
	if _, err := s.Take(ctx, c); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Errorf("after two READONLY failures, Take = %v; want ErrCircuitOpen", err)
	}
	if n := mc.Exists(ctx, redisKeys(redisstore.DefaultPrefix, c)[0]).Val(); n != 0 {
		t.Errorf("the master holds the replica store's key (%d); want nothing written", n)
	}
}

// TestBreakerOneProbeAmongMany: once the cool-down is over, of many
// concurrent calls on a Redis still dead exactly one goes to Redis (the
// probe, which fails and opens the circuit again); every other gets
// ErrCircuitOpen, whether it came while the probe was in flight or after
// it failed (the injected clock stands still).
func TestBreakerOneProbeAmongMany(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer client.Close()
	clk := &manualClock{t: corruptT0}
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithCircuitBreaker(1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, Key: "probe"}
	if _, err := s.Take(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, c); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take on a dead Redis = %v, want its failure", err)
	}
	clk.t = clk.t.Add(10 * time.Second)
	const n = 32
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			_, err := s.Take(ctx, c)
			errs <- err
		}()
	}
	close(start)
	sent := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			t.Error("a Take on a dead Redis succeeded")
		case !errors.Is(err, redisstore.ErrCircuitOpen):
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("%d of %d concurrent Takes after the cool-down went to Redis; want exactly one probe", sent, n)
	}
}

// TestPeekNeedsNoWrites: a Peek writes nothing (TestPeekWritesNothing),
// so a Redis that refuses writes still answers it: one at its maxmemory
// (OOM) and a read-only replica, as a function as well as as a script.
// As a function it was refused whole ("OOM command not allowed",
// "READONLY You can't write against a read only replica"), the library's
// function being one that may write, while the script, whose writes are
// checked as they come, answered.
func TestPeekNeedsNoWrites(t *testing.T) {
	master, replica := replicaPair(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer admin.Close()
	for _, srv := range []*redistest.Server{master, replica} {
		if _, err := srv.Do("ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro"); err != nil {
			t.Fatal(err)
		}
	}
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "peek"}
	clk := &manualClock{t: corruptT0}
	writer, err := redisstore.New(admin, redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Take(ctx, c, c); err != nil { // 3 left, and the library loaded
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "WAIT", 1, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.ConfigSet(ctx, "maxmemory", "0")
	for _, srv := range []*redistest.Server{master, replica} {
		what := "at maxmemory"
		if srv == replica {
			what = "on a replica"
		}
		for _, name := range []string{"function", "script"} {
			opts := &redis.Options{Addr: srv.Addr, MaxRetries: -1}
			if name == "script" {
				opts.Username, opts.Password = "nofunctions", "any"
			}
			client := redis.NewClient(opts)
			defer client.Close()
			s, err := redisstore.New(client, redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]algorithms.Decision, 1)
			if err := s.Peek(ctx, dst, []algorithms.Check{c}); err != nil || !dst[0].Allowed || dst[0].Remaining != 3 {
				t.Errorf("%s, %s: Peek = %+v, %v; want allowed with 3 left", what, name, dst[0], err)
			}
		}
	}
}

// replicaPair starts a master and a read-only replica linked to it.
func replicaPair(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	master = redistest.New(t, "--repl-diskless-sync-delay", "0")
	replica = redistest.New(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	if !hangguard.Poll(10*time.Second, 5*time.Millisecond, func() bool {
		info, err := replica.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up")
	}) {
		t.Fatal("the replica did not link to its master in 10s")
	}
	return master, replica
}
