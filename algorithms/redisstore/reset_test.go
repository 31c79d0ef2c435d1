package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// exhaust takes unit requests of c until one is denied, failing t unless
// the capacity was admitted first.
func exhaust(t *testing.T, s algorithms.Store, c algorithms.Check) {
	t.Helper()
	c.Cost = 1
	for i := range c.Spec.Capacity() + 1 {
		ds, err := s.Take(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		if ds[0].Allowed != (i < c.Spec.Capacity()) {
			t.Fatalf("%s %q, unit %d of %d: %+v", c.Spec, c.Key, i+1, c.Spec.Capacity(), ds[0])
		}
	}
}

// takeOne takes c and returns its decision, failing t on an error.
func takeOne(t *testing.T, s algorithms.Store, c algorithms.Check) algorithms.Decision {
	t.Helper()
	ds, err := s.Take(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ds[0]
}

// prefixKeys returns the keys under prefix on every master of client (one
// node for a plain client).
func prefixKeys(t *testing.T, client redis.UniversalClient, prefix string) []string {
	t.Helper()
	var mu sync.Mutex
	var keys []string
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(t.Context(), scan)
	case *redis.Client:
		err = scan(t.Context(), c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestResetOneDel: a Reset of several checks, sliding_log's among them
// (two Redis keys), is one DEL, which leaves none of their keys in Redis
// and the other keys there.
func TestResetOneDel(t *testing.T) {
	client := newClient(t)
	hook := &countHook{}
	client.AddHook(hook)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	reset, kept := everyKind("ns:alice"), everyKind("bob")
	for _, c := range append(append([]algorithms.Check{}, reset...), kept...) {
		takeOne(t, s, c)
	}
	before := len(prefixKeys(t, client, prefix))
	if before != 2*(len(reset)+1) { // sliding_log has two keys
		t.Fatalf("%d keys under the prefix, want %d", before, 2*(len(reset)+1))
	}
	hook.reset()
	if err := s.Reset(t.Context(), reset...); err != nil {
		t.Fatal(err)
	}
	if cmds, pipes := hook.snapshot(); len(cmds) != 1 || cmds[0] != "del" || pipes != 0 {
		t.Fatalf("Reset sent %v (and %d pipelines), want one DEL", cmds, pipes)
	}
	left := prefixKeys(t, client, prefix)
	if len(left) != len(kept)+1 {
		t.Fatalf("after the reset the keys under the prefix are %v, want only bob's %d", left, len(kept)+1)
	}
	for _, k := range left {
		if !strings.Contains(k, "{bob}") {
			t.Errorf("key %q left after the reset of alice's keys", k)
		}
	}
	for _, c := range reset {
		if d := takeOne(t, s, c); d.Remaining != c.Spec.Capacity()-1 {
			t.Errorf("%s after the reset: %+v, want Remaining %d", c.Spec, d, c.Spec.Capacity()-1)
		}
	}
}

// TestResetClearsTheDenyCache: a denial the deny cache answers locally is
// forgotten by a Reset of its key under its Spec, so the next Take goes to
// Redis and is admitted; the key's cached denial under another Spec stays.
func TestResetClearsTheDenyCache(t *testing.T) {
	client := newClient(t)
	hook := &countHook{}
	client.AddHook(hook)
	s, _ := denyCacheStore(t, client)
	ctx := t.Context()
	k := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, Key: "pol:k"}
	o := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Minute}, Key: "pol:k"}
	exhaust(t, s, k)
	exhaust(t, s, o)
	hook.reset()
	if d := takeOne(t, s, k); d.Allowed {
		t.Fatalf("exhausted key admitted: %+v", d)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Fatalf("the denial was not answered from the cache: %v sent", cmds)
	}
	if err := s.Reset(ctx, k); err != nil {
		t.Fatal(err)
	}
	hook.reset()
	if d := takeOne(t, s, k); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("Take after the reset: %+v, want admitted with Remaining 1 (a stale cached denial?)", d)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("Take after the reset sent %v, want one call to Redis", cmds)
	}
	hook.reset()
	if d := takeOne(t, s, o); d.Allowed {
		t.Fatalf("the key under another Spec, not reset, admitted: %+v", d)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Errorf("the key under another Spec: its cached denial went (%v sent)", cmds)
	}
}

// resetInFlight is a hook that, once armed, runs reset once, after the
// reply of the next script call (a Take's) has arrived and before the
// Take goes on with it.
type resetInFlight struct {
	redistest.PassHooks
	mu    sync.Mutex
	reset func()
}

func (h *resetInFlight) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if n := cmd.Name(); n == "fcall" || n == "evalsha" || n == "eval" {
			h.mu.Lock()
			f := h.reset
			h.reset = nil
			h.mu.Unlock()
			if f != nil {
				f()
			}
		}
		return err
	}
}

// TestResetDuringADenial: a Take that Redis denied before a Reset of its
// key, but whose reply the store reads after the Reset, must not cache
// the denial: the Take after the Reset is admitted.
func TestResetDuringADenial(t *testing.T) {
	client := newClient(t)
	hook := &resetInFlight{}
	client.AddHook(hook)
	s, _ := denyCacheStore(t, client)
	k := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Minute}, Key: "k"}
	exhaust(t, s, algorithms.Check{Spec: k.Spec, Key: "other"}) // the store's script is loaded
	for range 2 {
		takeOne(t, s, k)
	}
	var rerr error
	hook.mu.Lock()
	hook.reset = func() { rerr = s.Reset(context.Background(), k) }
	hook.mu.Unlock()
	if d := takeOne(t, s, k); d.Allowed {
		t.Fatalf("exhausted key admitted: %+v", d)
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	if d := takeOne(t, s, k); !d.Allowed {
		t.Fatalf("Take after the Reset: %+v; the denial read after the Reset was cached", d)
	}
}

// pipelineHook records the commands a client sends, as calls: one
// command alone, or a pipeline's.
type pipelineHook struct {
	redistest.PassHooks
	mu   sync.Mutex
	sent [][]string
}

func (h *pipelineHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.sent = append(h.sent, []string{cmd.Name()})
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *pipelineHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			names = append(names, c.Name())
		}
		h.mu.Lock()
		h.sent = append(h.sent, names)
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *pipelineHook) reset() {
	h.mu.Lock()
	h.sent = nil
	h.mu.Unlock()
}

// TestResetClusterAcrossSlots: on a three-node Cluster, one Reset of keys
// on three slots (every kind of each) deletes them all, in one DEL per
// slot; other keys, in those slots too, are kept.
func TestResetClusterAcrossSlots(t *testing.T) {
	client := sharedCluster(t)
	hook := &pipelineHook{}
	client.AddHook(hook)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(&manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}))
	if err != nil {
		t.Fatal(err)
	}
	users := keysOnThreeSlots()[:3] // three slots, one on each node
	var reset, kept []algorithms.Check
	for _, u := range users {
		reset = append(reset, everyKind("login:"+u)...)
		kept = append(kept, everyKind("api:"+u)...) // same slot, another namespace
	}
	for _, c := range append(append([]algorithms.Check{}, reset...), kept...) {
		exhaust(t, s, c)
	}
	hook.reset()
	if err := s.Reset(t.Context(), reset...); err != nil {
		t.Fatal(err)
	}
	hook.mu.Lock()
	sent := hook.sent
	hook.mu.Unlock()
	if len(sent) != 1 || strings.Join(sent[0], " ") != strings.TrimSpace(strings.Repeat("del ", len(users))) {
		t.Errorf("Reset on %d slots sent %v, want one pipeline of %d DELs", len(users), sent, len(users))
	}
	for _, c := range reset {
		if d := takeOne(t, s, c); !d.Allowed || d.Remaining != c.Spec.Capacity()-1 {
			t.Errorf("%s %q after the reset: %+v, want Remaining %d", c.Spec, c.Key, d, c.Spec.Capacity()-1)
		}
	}
	for _, c := range kept {
		if d := takeOne(t, s, c); d.Allowed {
			t.Errorf("%s %q, not reset, admitted: %+v", c.Spec, c.Key, d)
		}
	}
	for _, k := range prefixKeys(t, client, prefix) {
		if !strings.Contains(k, ":api:") && !strings.Contains(k, ":login:") {
			t.Errorf("unexpected key %q", k)
		}
	}
	if n, want := len(prefixKeys(t, client, prefix)), 2*len(reset)+2*len(users); n != want {
		// the kept keys, and the reset keys taken again (sliding_log's two each)
		t.Errorf("%d keys under the prefix, want %d", n, want)
	}
}

// TestResetFailingBackend: a Reset on a stopped Redis is an error, counted
// by the circuit breaker as a Take's is, which then refuses Resets and
// Takes alike at once; a paused Redis fails a Reset at the store's
// timeout; and a closed store refuses it.
func TestResetFailingBackend(t *testing.T) {
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: time.Minute}, Key: "k"}
	t.Run("stopped", func(t *testing.T) {
		srv := redistest.New(t)
		hook := &countHook{}
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		defer client.Close()
		client.AddHook(hook)
		clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
		s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithCircuitBreaker(2, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		takeOne(t, s, c)
		if err := s.Reset(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		_ = srv.Stop()
		for i := range 2 {
			err := s.Reset(t.Context(), c)
			if err == nil || errors.Is(err, redisstore.ErrCircuitOpen) || !strings.Contains(err.Error(), "redisstore: reset") {
				t.Fatalf("Reset %d on a stopped Redis: %v, want the store's error of a failed reset", i+1, err)
			}
		}
		hook.reset()
		if err := s.Reset(t.Context(), c); !errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Errorf("Reset after two failures: %v, want ErrCircuitOpen", err)
		}
		if _, err := s.Take(t.Context(), c); !errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Errorf("Take after two failed Resets: %v, want ErrCircuitOpen", err)
		}
		if cmds, _ := hook.snapshot(); len(cmds) != 0 {
			t.Errorf("the open circuit sent %v", cmds)
		}
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(10 * time.Second)
		if err := s.Reset(t.Context(), c); err != nil {
			t.Errorf("a Reset probing a Redis back up: %v", err)
		}
		if d := takeOne(t, s, c); !d.Allowed {
			t.Errorf("Take after the circuit closed: %+v", d)
		}
	})
	t.Run("paused", func(t *testing.T) {
		srv := redistest.New(t)
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer client.Close()
		s, err := redisstore.New(client, redisstore.WithTimeout(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		takeOne(t, s, c)
		pauseWrites(t, srv, 1000)
		start := time.Now()
		err = s.Reset(t.Context(), c)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reset") {
			t.Errorf("Reset on a paused Redis: %v, want the store's timeout of a reset", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Reset on a paused Redis took %s, with a timeout of 100ms", took)
		}
		// The caller's own deadline is returned as it is.
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if err := s.Reset(ctx, c); err != context.DeadlineExceeded {
			t.Errorf("Reset at the caller's deadline: %v, want context.DeadlineExceeded itself", err)
		}
		_ = s.Close()
		if err := s.Reset(t.Context(), c); !errors.Is(err, algorithms.ErrClosed) {
			t.Errorf("Reset after Close: %v, want ErrClosed", err)
		}
	})
}

// beforeDel is a hook that, once armed, runs f once before the next DEL
// is sent.
type beforeDel struct {
	redistest.PassHooks
	mu sync.Mutex
	f  func()
}

func (h *beforeDel) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "del" {
			h.mu.Lock()
			f := h.f
			h.f = nil
			h.mu.Unlock()
			if f != nil {
				f()
			}
		}
		return next(ctx, cmd)
	}
}

// TestResetDenialBeforeTheDel: a Take that Redis denies while a Reset of
// its key is under way, before its DEL, caches its denial; the Reset must
// forget it once the DEL is done, so that the next Take is admitted.
func TestResetDenialBeforeTheDel(t *testing.T) {
	client := newClient(t)
	hook := &beforeDel{}
	client.AddHook(hook)
	s, _ := denyCacheStore(t, client)
	k := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: time.Minute}, Key: "k"}
	exhaust(t, s, k)
	var during algorithms.Decision
	hook.mu.Lock()
	hook.f = func() { during = takeOne(t, s, k) }
	hook.mu.Unlock()
	if err := s.Reset(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	if during.Allowed {
		t.Fatalf("the Take before the DEL was admitted: %+v", during)
	}
	if d := takeOne(t, s, k); !d.Allowed {
		t.Fatalf("Take after the Reset: %+v; the denial Redis made before the DEL is still cached", d)
	}
}

// Reset resets on the next instance, so that TestConformanceTwoInstances
// runs the Reset group too: a reset made by one instance is seen by the
// other at once (neither has a deny cache).
func (t twoInstances) Reset(ctx context.Context, checks ...algorithms.Check) error {
	return t.next().Reset(ctx, checks...)
}
