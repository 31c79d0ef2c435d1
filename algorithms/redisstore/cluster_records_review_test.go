package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// recordKinds are the kinds whose value a cross-slot reservation follows
// with records (lua/cluster.lua).
var recordKinds = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.TokenBucket, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute},
}

// TestClusterPeekOfAKeyWithRecords: an admitted cross-slot Take of L and
// y leaves its reservation's record in L's value. A Peek of L alone, and
// one of L and y (per slot), decide as the memory store's Peek after the
// same Takes, and write nothing: L's value is the same string,
// its expiry not moved. A Peek that dropped the records, or wrote the
// state with a new expiry, or read the value as foreign, fails it.
func TestClusterPeekOfAKeyWithRecords(t *testing.T) {
	for _, sp := range recordKinds {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			m, L := u.m, u.L
			ctx := context.Background()
			y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "route-/login"}
			// The memory store's Peek, after the same Takes.
			mem, err := algorithms.NewMemoryStore(algorithms.WithClock(m.clk))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(u.other, "other")
			two := L
			two.Cost = 2
			for _, c := range []struct {
				at     time.Duration
				checks []algorithms.Check
			}{{time.Second, []algorithms.Check{two}}, {30 * time.Second, []algorithms.Check{L, y}}} {
				take(c.at, c.checks...)
				if _, err := mem.Take(ctx, c.checks...); err != nil {
					t.Fatal(err)
				}
			}
			look := sharedCluster(t)
			before, err := look.Get(ctx, u.lkey).Result()
			if err != nil || !strings.Contains(before, "|") {
				t.Fatalf("L after the cross-slot Take = %q, %v; want its state and a record", before, err)
			}
			ttl, err := look.PTTL(ctx, u.lkey).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, checks := range [][]algorithms.Check{{L}, {L, y}} {
				m.clk.t = m.base.Add(31 * time.Second)
				got := make([]algorithms.Decision, len(checks))
				if err := u.other.Peek(ctx, got, checks); err != nil {
					t.Fatal(err)
				}
				want := make([]algorithms.Decision, len(checks))
				if err := mem.Peek(ctx, want, checks); err != nil {
					t.Fatal(err)
				}
				for j := range checks {
					if got[j] != want[j] {
						t.Fatalf("Peek(%d checks) check %d = %+v; the Model decides %+v", len(checks), j, got[j], want[j])
					}
				}
				after, err := look.Get(ctx, u.lkey).Result()
				if err != nil || after != before {
					t.Fatalf("L after a Peek = %q, %v; want it untouched, %q", after, err, before)
				}
				if left, err := look.PTTL(ctx, u.lkey).Result(); err != nil || left > ttl {
					t.Fatalf("L's expiry after a Peek: %v, %v; want no later than before (%v)", left, err, ttl)
				}
			}
			take(32*time.Second, L)
		})
	}
}

// TestClusterUndoBarInPrefixAndKey: the records follow the state after a
// "|"; a prefix and a client key holding "|" (the store does not escape
// it) change nothing, since no value spells its key: a cross-slot Take
// that loses its race leaves L's value as it was, and L goes on as the
// Model's.
func TestClusterUndoBarInPrefixAndKey(t *testing.T) {
	for _, sp := range recordKinds {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			m := newModelRun(t)
			prefix := uniquePrefix(t) + "|p|1"
			ctx := context.Background()
			other, err := redisstore.New(sharedCluster(t), redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			L := algorithms.Check{Spec: sp, Key: "user|1"}
			y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			lkey, ykey := redisKeys(prefix, L)[0], redisKeys(prefix, y)[0]
			look := sharedCluster(t)
			if a, b := look.ClusterKeySlot(ctx, lkey).Val(), look.ClusterKeySlot(ctx, ykey).Val(); a == b {
				t.Fatalf("L and y share slot %d: the Take would not be split", a)
			}
			client := sharedCluster(t)
			client.AddHook(&raceHook{key: ykey, race: func() {
				d, err := other.Take(ctx, y)
				if diff := m.compare("other", d, err, false, y); diff != "" {
					t.Error(diff)
				}
			}})
			s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(other, "other")
			two := L
			two.Cost = 2
			take(time.Second, two)
			before := look.Get(ctx, lkey).Val()
			m.clk.t = m.base.Add(30 * time.Second)
			d, err := s.Take(ctx, L, y)
			if diff := m.compare("s", d, err, false, L, y); diff != "" {
				t.Fatal(diff)
			}
			if d[1].Allowed {
				t.Fatalf("Take(L, y) = %+v; want y denied (its unit raced away)", d)
			}
			if after := look.Get(ctx, lkey).Val(); after != before {
				t.Fatalf("L after the undo = %q; want it as before the Take, %q", after, before)
			}
			take(31*time.Second, L)
			goesOnAsModel(take, L)
		})
	}
}
