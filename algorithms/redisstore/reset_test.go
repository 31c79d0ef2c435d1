package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
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

// hourly returns cs with windows of an hour.
func hourly(cs []algorithms.Check) []algorithms.Check {
	out := make([]algorithms.Check, len(cs))
	for i, c := range cs {
		c.Spec.Window = time.Hour
		out[i] = c
	}
	return out
}

// TestResetOneDel: a Reset of several checks, sliding_log's among them
// (two Redis keys), is one DEL, which leaves none of their keys in Redis
// and the other keys there.
func TestResetOneDel(t *testing.T) {
	client, hook := countedClient(t)
	prefix := uniquePrefix(t)
	// Windows of an hour on a clock that stands still: no key the test
	// counts expires before it ends, however slow the machine. With a
	// second's window a token bucket's key one unit short lived 200ms, a
	// fixed window's what was left of its second.
	clk := &manualClock{t: time.Date(2026, 12, 1, 7, 0, 10, 0, time.UTC)}
	s := clockedStore(t, client, clk, redisstore.WithPrefix(prefix))
	reset, kept := hourly(everyKind("ns:alice")), hourly(everyKind("bob"))
	for _, c := range append(append([]algorithms.Check{}, reset...), kept...) {
		takeOne(t, s, c)
	}
	before := len(keysUnder(t, client, prefix))
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
	left := keysUnder(t, client, prefix)
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
	client, hook := countedClient(t)
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

// armedHook runs f once, when armed, at the next command named one of
// names: before it is sent, or, with after, once its reply has arrived
// and before the caller goes on with it.
type armedHook struct {
	redistest.PassHooks
	names []string
	after bool
	mu    sync.Mutex
	f     func()
}

func (h *armedHook) arm(f func()) {
	h.mu.Lock()
	h.f = f
	h.mu.Unlock()
}

func (h *armedHook) fire() {
	h.mu.Lock()
	f := h.f
	h.f = nil
	h.mu.Unlock()
	if f != nil {
		f()
	}
}

func (h *armedHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		at := slices.Contains(h.names, cmd.Name())
		if at && !h.after {
			h.fire()
		}
		err := next(ctx, cmd)
		if at && h.after {
			h.fire()
		}
		return err
	}
}

// TestResetDuringADenial: a Take that Redis denied before a Reset of its
// key, but whose reply the store reads after the Reset, must not cache
// the denial: the Take after the Reset is admitted.
func TestResetDuringADenial(t *testing.T) {
	client := newClient(t)
	hook := &armedHook{names: []string{"fcall", "evalsha", "eval"}, after: true}
	client.AddHook(hook)
	s, _ := denyCacheStore(t, client)
	k := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Minute}, Key: "k"}
	exhaust(t, s, algorithms.Check{Spec: k.Spec, Key: "other"}) // the store's script is loaded
	for range 2 {
		takeOne(t, s, k)
	}
	var rerr error
	hook.arm(func() { rerr = s.Reset(context.Background(), k) })
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

// TestResetClusterAcrossSlots: on a three-node Cluster, one Reset of keys
// on three slots (every kind of each) deletes them all, in one DEL per
// slot; other keys, in those slots too, are kept.
func TestResetClusterAcrossSlots(t *testing.T) {
	client := sharedCluster(t)
	hook := &countHook{}
	client.AddHook(hook)
	prefix := uniquePrefix(t)
	s := clockedStore(t, client, &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}, redisstore.WithPrefix(prefix))
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
	cmds, _ := hook.snapshot()
	piped := hook.pipelinedCommands()
	if len(cmds) != 0 || len(piped) != 1 || strings.Join(piped[0], " ") != strings.TrimSpace(strings.Repeat("del ", len(users))) {
		t.Errorf("Reset on %d slots sent %v and pipelines %v, want one pipeline of %d DELs", len(users), cmds, piped, len(users))
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
	for _, k := range keysUnder(t, client, prefix) {
		if !strings.Contains(k, ":api:") && !strings.Contains(k, ":login:") {
			t.Errorf("unexpected key %q", k)
		}
	}
	if n, want := len(keysUnder(t, client, prefix)), 2*len(reset)+2*len(users); n != want {
		// the kept keys, and the reset keys taken again (sliding_log's two each)
		t.Errorf("%d keys under the prefix, want %d", n, want)
	}
}

// TestResetFailingBackend: a paused Redis fails a Reset at the store's
// timeout, a caller's deadline is returned as it is, and a closed store
// refuses a Reset. (A Reset on a stopped Redis, and the circuit breaker:
// TestCircuitBreaker.)
func TestResetFailingBackend(t *testing.T) {
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: time.Minute}, Key: "k"}
	t.Run("paused", func(t *testing.T) {
		srv := redistest.New(t)
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer client.Close()
		warmUp(t, client, c) // not under the 100ms timeout tested
		s, err := redisstore.New(client, redisstore.WithTimeout(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		pauseWrites(t, srv, 1000)
		// The bound counts the test process's running time (hangguard),
		// not the wall's, which a process starved by a loaded machine can
		// overrun.
		const bound = 2 * time.Second
		result := make(chan error, 1)
		start := time.Now()
		go func() { result <- s.Reset(t.Context(), c) }()
		err, ok := hangguard.Within(result, bound)
		if !ok {
			t.Fatalf("Reset on a paused Redis had not returned after %s of the test's running time, with a timeout of 100ms", bound)
		}
		if took := time.Since(start); took > bound {
			t.Logf("Reset on a paused Redis returned after %s on the wall clock, within %s of the test's running time", took, bound)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reset") {
			t.Errorf("Reset on a paused Redis: %v, want the store's timeout of a reset", err)
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

// TestResetDenialBeforeTheDel: a Take that Redis denies while a Reset of
// its key is under way, before its DEL, caches its denial; the Reset must
// forget it once the DEL is done, so that the next Take is admitted.
func TestResetDenialBeforeTheDel(t *testing.T) {
	client := newClient(t)
	hook := &armedHook{names: []string{"del"}}
	client.AddHook(hook)
	s, _ := denyCacheStore(t, client)
	k := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: time.Minute}, Key: "k"}
	exhaust(t, s, k)
	var during algorithms.Decision
	hook.arm(func() { during = takeOne(t, s, k) })
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

// TestResetDeletesSideKeys: Reset deletes, with a sliding_log or
// sliding_buckets key, its side key (":u"), where a Cluster's cross-slot
// Takes list their reservations, on a Cluster (split per slot or not) and
// on one server alike; a ":u" key beside a key of another kind is not the
// store's, and is left alone.
func TestResetDeletesSideKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		users  []string
	}{
		{"server", newClient(t), []string{"alice"}},
		{"cluster/one slot", sharedCluster(t), []string{"alice"}},
		{"cluster/three slots", sharedCluster(t), keysOnThreeSlots()[:3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			s := clockedStore(t, tc.client, &manualClock{t: time.Date(2026, 12, 4, 7, 0, 10, 0, time.UTC)}, redisstore.WithPrefix(prefix))
			var checks []algorithms.Check
			for _, u := range tc.users {
				checks = append(checks, everyKind(u)...) // no namespace: redisKeys' layout
			}
			ctx := t.Context()
			for _, c := range checks {
				if err := tc.client.Set(ctx, redisKeys(prefix, c)[0]+":u", "x", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Reset(ctx, checks...); err != nil {
				t.Fatal(err)
			}
			for _, c := range checks {
				side := redisKeys(prefix, c)[0] + ":u"
				n, err := tc.client.Exists(ctx, side).Result()
				if err != nil {
					t.Fatal(err)
				}
				ours := len(sideKeys(prefix, c)) == 1
				if ours == (n == 0) {
					continue
				}
				if ours {
					t.Errorf("%s: side key %q left after Reset", c.Spec.Algorithm, side)
				} else {
					t.Errorf("%s: key %q, not the store's, deleted by Reset", c.Spec.Algorithm, side)
				}
			}
		})
	}
}
