package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestPeekOneRoundTrip counts, with a go-redis hook, the commands every
// Peek sends: exactly one FCALL, however many checks of whichever kinds,
// held or not, on the server's clock and on an injected one; one EVALSHA
// for a user that may not use functions; and on a Cluster, one FCALL per
// slot its keys span.
func TestPeekOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	eachRoundTripStore(t, func(t *testing.T, s *redisstore.Store, hook *countHook, want string) {
		all := everyKind("k")
		if _, err := s.Take(ctx, all...); err != nil { // held keys, and "other" ones not
			t.Fatal(err)
		}
		hook.reset()
		peeks := 0
		for n := 1; n <= len(all); n++ {
			for _, checks := range [][]algorithms.Check{all[:n], everyKind("other")[len(all)-n:], append(all[:n:n], all[:n]...)} {
				dst := make([]algorithms.Decision, len(checks))
				if err := s.Peek(ctx, dst, checks); err != nil {
					t.Fatal(err)
				}
				peeks++
			}
		}
		wantOneCommandEach(t, hook, peeks, want, "Peeks")
	})
	t.Run("cluster", func(t *testing.T) {
		_, s, hook := countedCluster(t)
		spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}
		var checks []algorithms.Check
		for _, k := range keysOnThreeSlots() { // five slots
			checks = append(checks, algorithms.Check{Spec: spec, Key: k})
		}
		if _, err := s.Take(ctx, checks...); err != nil { // may load the library
			t.Fatal(err)
		}
		hook.reset()
		dst := make([]algorithms.Decision, len(checks))
		if err := s.Peek(ctx, dst, checks); err != nil {
			t.Fatal(err)
		}
		for i, d := range dst {
			if !d.Allowed || d.Remaining != 4 {
				t.Errorf("check %d: Peek = %+v, want admitted with 4 remaining", i, d)
			}
		}
		if cmds, _ := hook.snapshot(); len(cmds) != len(checks) || slices.ContainsFunc(cmds, func(c string) bool { return c != "fcall" }) {
			t.Fatalf("a Peek of keys on %d slots sent %v, want one fcall per slot", len(checks), cmds)
		}
		hook.reset()
		if err := s.Peek(ctx, dst[:2], []algorithms.Check{{Spec: spec, Key: "per-second:1.2.3.4"}, {Spec: spec, Key: "per-day:1.2.3.4"}}); err != nil {
			t.Fatal(err)
		}
		if cmds, _ := hook.snapshot(); len(cmds) != 1 {
			t.Fatalf("a Peek of two keys of one slot sent %v, want one fcall", cmds)
		}
	})
}

// TestPeekWritesNothing peeks, as a user that may run no write command
// (ACL -@write: a SET, PEXPIRE, RPUSH or DEL in the script fails the
// call), keys of every kind: held, unknown, a sliding_log whose total was
// lost (a Take rebuilds and writes it), at the keys' instant and windows
// ahead (a Take would keep the rolled ring and pruned log), through the
// function and the script fallback; the Peeks succeed, agree with the
// writing store's own, and the keys under the prefix stay as they were,
// values and expiries.
func TestPeekWritesNothing(t *testing.T) {
	srv := sharedServer(t)
	admin := newClient(t)
	ctx := context.Background()
	for _, u := range []struct{ name, rules string }{
		{"peekro", "+@all -@write"},
		{"peekro-nofn", "+@all -@write -function -fcall -fcall_ro"},
	} {
		args := []any{"ACL", "SETUSER", u.name, "reset", "on", "nopass", "~*", "&*"}
		for _, r := range strings.Fields(u.rules) {
			args = append(args, r)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, user := range []string{"peekro", "peekro-nofn"} {
		t.Run(user, func(t *testing.T) {
			prefix := uniquePrefix(t)
			clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC)}
			writer, err := redisstore.New(admin, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			roClient := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "any"})
			defer roClient.Close()
			reader, err := redisstore.New(roClient, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			held := everyKind("k")
			lost := algorithms.Check{Spec: held[1].Spec, Key: "lost"} // sliding_log
			for range 3 {
				if _, err := writer.Take(ctx, append(held, lost)...); err != nil {
					t.Fatal(err)
				}
				clk.t = clk.t.Add(100 * time.Millisecond)
			}
			var totals []string
			if err := admin.Keys(ctx, prefix+":{lost}*").ScanSlice(&totals); err != nil {
				t.Fatal(err)
			}
			for _, k := range totals {
				if !strings.HasSuffix(k, ":l") {
					admin.Del(ctx, k) // the total alone: a Take would rebuild it
				}
			}
			before := snapshot(t, admin, prefix)
			checks := append(append(held, lost), everyKind("unknown")...)
			start := clk.t
			for _, ahead := range []time.Duration{0, 500 * time.Millisecond, 3 * time.Second} {
				clk.t = start.Add(ahead)
				got := make([]algorithms.Decision, len(checks))
				if err := reader.Peek(ctx, got, checks); err != nil {
					t.Fatalf("Peek at +%v as a user that may not write: %v", ahead, err)
				}
				// The writer's own Peek, at the same instant, agrees.
				want := make([]algorithms.Decision, len(checks))
				if err := writer.Peek(ctx, want, checks); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("+%v, check %d: Peek as %s %+v, as the writer %+v", ahead, i, user, got[i], want[i])
					}
				}
			}
			after := snapshot(t, admin, prefix)
			if !slices.Equal(before, after) {
				t.Fatalf("Peeks changed the keys:\nbefore %v\nafter  %v", before, after)
			}
			if ks := admin.Keys(ctx, prefix+":{unknown}*").Val(); len(ks) != 0 {
				t.Fatalf("Peeks of unknown keys made %v", ks)
			}
		})
	}
}

// snapshot lists the keys under prefix, each with its value (a list's
// items) and whether it has an expiry.
func snapshot(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		var v string
		if c.Type(ctx, k).Val() == "list" {
			v = fmt.Sprint(c.LRange(ctx, k, 0, -1).Val())
		} else {
			v = c.Get(ctx, k).Val()
		}
		out = append(out, fmt.Sprintf("%s=%s ttl=%v", k, v, c.PTTL(ctx, k).Val() > 0))
	}
	return out
}

// TestPeekMatchesMemoryStore replays random traces on the in-memory store
// and on Redis with the same clock (function library, script fallback,
// cluster: see replayTraces), peeking every step's checks before its
// Take, and now and then windows ahead: every Peek must match the memory
// store's and the Model's, field by field, and the Takes still match,
// which they would not had a Peek changed a key.
func TestPeekMatchesMemoryStore(t *testing.T) {
	replayTraces(t, 6161, func(t *testing.T, r *rand.Rand, clk *manualClock, mem *algorithms.MemoryStore, rs *redisstore.Store) {
		model := algotest.NewModel()
		var specs []algorithms.Spec
		for range 3 {
			specs = append(specs, randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]))
		}
		specs = append(specs, smallSpec(algorithms.Kinds[r.IntN(len(algorithms.Kinds))]))
		keys := []string{"a", "b", "", "{x}:y"}
		ctx := context.Background()
		var history []string
		peek := func(i int, checks []algorithms.Check) {
			t.Helper()
			got := make([]algorithms.Decision, len(checks))
			want := make([]algorithms.Decision, len(checks))
			gerr := rs.Peek(ctx, got, checks)
			werr := mem.Peek(ctx, want, checks)
			mds, merr := model.PeekAt(clk.t, checks...)
			history = append(history, fmt.Sprintf("step %d at %d: peek %+v", i, clk.t.UnixNano(), checks))
			if gerr != nil || werr != nil || merr != nil {
				t.Fatalf("%s\nPeek errors: redis %v, memory %v, model %v", join(history), gerr, werr, merr)
			}
			for j := range got {
				if got[j] != want[j] || want[j] != mds[j] {
					t.Fatalf("%s\nPeek of check %d (%s):\n\tredis  %+v\n\tmemory %+v\n\tmodel  %+v", join(history), j, checks[j].Spec, got[j], want[j], mds[j])
				}
			}
		}
		for i := range 150 {
			w := specs[r.IntN(len(specs))].Window
			step(r, clk, w)
			checks := randomChecks(r, specs, keys, 3)
			if r.IntN(4) == 0 {
				now := clk.t
				clk.t = now.Add(time.Duration(r.Int64N(3*int64(w) + 1)))
				peek(i, checks)
				clk.t = now
			}
			peek(i, checks)
			want, werr := takeAlike(t, mem, rs, clk, &history, i, checks)
			mds, merr := model.TakeAt(clk.t, checks...)
			if werr != nil || merr != nil {
				t.Fatalf("%s\nTake errors: memory %v, model %v", join(history), werr, merr)
			}
			for j := range mds {
				if mds[j] != want[j] {
					t.Fatalf("%s\ncheck %d (%s): memory %+v\n           model %+v", join(history), j, checks[j].Spec, want[j], mds[j])
				}
			}
		}
	})
}

// TestPeekDenyCache: the deny cache neither answers a Peek nor learns
// from one. A Take denied and cached is answered locally; a Peek of the
// same check goes to Redis, and so sees the key an operator deleted
// (fresh), where the cached denial still stands for Takes of this process
// until its RetryAfter.
func TestPeekDenyCache(t *testing.T) {
	client, hook := countedClient(t)
	clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	prefix := uniquePrefix(t)
	s := clockedStore(t, client, clk, redisstore.WithPrefix(prefix), redisstore.WithDenyCache(16))
	ctx := context.Background()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, Key: "k"}
	for range 3 {
		if _, err := s.Take(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	hook.reset()
	ds, err := s.Take(ctx, c)
	if err != nil || ds[0].Allowed {
		t.Fatalf("Take after the limit = %+v, %v; want denied", ds, err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Fatalf("a cached denial sent %v", cmds)
	}
	dst := make([]algorithms.Decision, 1)
	if err := s.Peek(ctx, dst, []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if dst[0] != ds[0] {
		t.Fatalf("Peek = %+v, the denied Take %+v", dst[0], ds[0])
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("Peek of a key the deny cache holds sent %v, want one call to Redis", cmds)
	}
	// An operator resets the client: Redis admits it again.
	var keys []string
	if err := client.Keys(ctx, prefix+":*").ScanSlice(&keys); err != nil || len(keys) == 0 {
		t.Fatalf("KEYS = %v, %v", keys, err)
	}
	client.Del(ctx, keys...)
	if err := s.Peek(ctx, dst, []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if !dst[0].Allowed || dst[0].Remaining != 2 {
		t.Fatalf("Peek of the deleted key = %+v, want a fresh key's", dst[0])
	}
	hook.reset()
	if ds, err := s.Take(ctx, c); err != nil || ds[0].Allowed {
		t.Fatalf("Take after the Peeks = %+v, %v; want still denied by the cache (a Peek neither forgets nor learns)", ds, err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Fatalf("the cached denial sent %v after the Peeks", cmds)
	}
}

// TestPeekTimeout: a Peek is bounded by WithTimeout, failing with an error
// that wraps context.DeadlineExceeded and names the Peek. (That a Peek
// goes through the circuit breaker as a Take does: TestCircuitBreaker.)
func TestPeekTimeout(t *testing.T) {
	srv := sharedServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	g := newGate()
	client.AddHook(&gateHook{gates: map[string]*gate{"slow": g}})
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
	s := clockedStore(t, client, clk, redisstore.WithTimeout(50*time.Millisecond))
	defer func() { _ = s.Close() }()
	slow := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second}, Key: "slow"}
	err := s.Peek(context.Background(), make([]algorithms.Decision, 1), []algorithms.Check{slow})
	g.outcome <- nil // let the abandoned call go on
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisstore: peek: ") {
		t.Fatalf("Peek past WithTimeout = %v, want an error of the peek wrapping context.DeadlineExceeded", err)
	}
}
