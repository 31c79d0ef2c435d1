package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestCrossSlotTakeWhileSlotMigrates: while a slot migrates (CLUSTER
// SETSLOT IMPORTING and MIGRATING, its keys moved by MIGRATE: what
// redis-cli --cluster reshard does), Redis runs a call of several keys of
// that slot only where all of them exist, and a reservation names its
// marker, a key no node holds yet. A cross-slot Take whose checks on the
// migrating slot are one key of a kind kept in one key (fixed_window,
// sliding_window, token_bucket, leaky_bucket, leaky_queue) is decided
// meanwhile, as the memory store decides it, whether that key is still at
// the source, already at the target, or new (its reservation is sent again
// without its marker); concurrent ones never admit more than the limit,
// and fail only when a bucket kind's undo must note a give-back. One with
// a sliding_log or sliding_buckets check there (several keys) fails with
// TRYAGAIN, its other slots' reservations undone (a Peek shows them as
// before), as does a plain Take of a new sliding_log key. A Peek, and a
// plain Take of the slot's key alone, are decided meanwhile; once the
// migration ends every cross-slot Take decides again, on the moved state,
// as the memory store does. (The package documentation says so under
// "Failures".)
func TestCrossSlotTakeWhileSlotMigrates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	do := mustDo(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	clk := &manualClock{t: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)}
	store, err := redisstore.New(client, redisstore.WithPrefix("mig"), redisstore.WithClock(clk), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	oneKey := []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.LeakyQueue}
	severalKeys := []algorithms.Kind{algorithms.SlidingLog, algorithms.SlidingBuckets}
	// x (user-1) is on slot 12542 (node 2), y (user-2) on slot 157 (node
	// 0), which migrates to node 1. A limit other than 3 names keys of
	// their own, new where first used.
	checksAt := func(k algorithms.Kind, limit int64) []algorithms.Check {
		sp := smallSpec(k)
		sp.Limit = limit
		return []algorithms.Check{{Spec: sp, Key: "user-1"}, {Spec: sp, Key: "user-2"}}
	}
	checksOf := func(k algorithms.Kind) []algorithms.Check { return checksAt(k, 3) }
	same := func(stage string, checks []algorithms.Check) {
		t.Helper()
		want, werr := mem.Take(ctx, checks...)
		got, gerr := store.Take(ctx, checks...)
		if werr != nil || gerr != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: Take(%+v) = %+v, %v; memory %+v, %v", stage, checks, got, gerr, want, werr)
		}
	}
	peek := func(stage string, checks []algorithms.Check) {
		t.Helper()
		want, got := make([]algorithms.Decision, len(checks)), make([]algorithms.Decision, len(checks))
		werr, gerr := mem.Peek(ctx, want, checks), store.Peek(ctx, got, checks)
		if werr != nil || gerr != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: Peek(%+v) = %+v, %v; memory %+v, %v", stage, checks, got, gerr, want, werr)
		}
	}
	for _, k := range algorithms.Kinds {
		same("before the migration", checksOf(k))
	}
	slot := do(cl.Nodes[0], "CLUSTER", "KEYSLOT", "user-2")
	if slot != "157" {
		t.Fatalf("user-2 is on slot %s, want 157", slot)
	}
	srcID, dstID := do(cl.Nodes[0], "CLUSTER", "MYID"), do(cl.Nodes[1], "CLUSTER", "MYID")
	do(cl.Nodes[1], "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	do(cl.Nodes[0], "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	migrate := func(keys []string) {
		t.Helper()
		if len(keys) > 0 {
			do(cl.Nodes[0], append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(cl.Nodes[1].Port), "", "0", "5000", "KEYS"}, keys...)...)
		}
	}
	stages := 0
	during := func(stage string, peekSeveral bool) {
		t.Helper()
		// A window later, the keys have room again: each stage admits
		// and denies.
		clk.t = clk.t.Add(time.Second)
		stages++
		for _, k := range oneKey {
			for range 4 {
				same(stage, checksOf(k))
			}
			same(stage+", keys new", checksAt(k, 3+int64(stages)))
		}
		for _, k := range severalKeys {
			checks := checksOf(k)
			if d, err := store.Take(ctx, checks...); err == nil || !strings.Contains(err.Error(), "TRYAGAIN") {
				t.Fatalf("%s: cross-slot Take(%+v) = %+v, %v; want TRYAGAIN", stage, checks, d, err)
			}
			if peekSeveral {
				peek(stage+", after the failed cross-slot Take", checks)
			}
		}
		same(stage+", a Take of y alone", checksOf(algorithms.FixedWindow)[1:])
		// Left: a plain Take of a new sliding_log key (two keys, on
		// no node) is refused too.
		newLog := checksAt(algorithms.SlidingLog, 3+int64(stages))[1:]
		if d, err := store.Take(ctx, newLog...); err == nil || !strings.Contains(err.Error(), "TRYAGAIN") {
			t.Fatalf("%s: Take(%+v) of a new sliding_log key = %+v, %v; want TRYAGAIN", stage, newLog, d, err)
		}
	}
	during("keys at the source", true)
	keys := strings.Split(do(cl.Nodes[0], "CLUSTER", "GETKEYSINSLOT", slot, "1000"), "\n")
	slices.Sort(keys)
	// Half the keys moved: a sliding_log's two keys, or a sliding_buckets
	// key and its side key, may be apart.
	var half []string
	for i, k := range keys {
		if i%2 == 0 {
			half = append(half, k)
		}
	}
	migrate(half)
	during("half the keys at the target", false)
	migrate(strings.Split(do(cl.Nodes[0], "CLUSTER", "GETKEYSINSLOT", slot, "1000"), "\n"))
	during("keys at the target", true)

	// Concurrent cross-slot Takes on new keys (a window of 2 s names
	// them), while the slot migrates: the reservations race, and those a
	// slot denies are undone. None admits past the limit, and a Peek
	// after the migration finds no more room on either key than the limit
	// less the admitted.
	const limit, takers = 4, 12
	racing := func(k algorithms.Kind) []algorithms.Check {
		checks := checksAt(k, limit)
		for i := range checks {
			checks[i].Spec.Window = 2 * time.Second
		}
		return checks
	}
	admitted := make(map[algorithms.Kind]int64)
	failed := make(map[algorithms.Kind][]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range oneKey {
		for range takers {
			wg.Go(func() {
				d, err := store.Take(ctx, racing(k)...)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed[k] = append(failed[k], err)
				} else if d[0].Allowed && d[1].Allowed {
					admitted[k]++
				}
			})
		}
	}
	wg.Wait()

	for _, n := range cl.Nodes {
		do(n, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
	}
	for _, k := range oneKey {
		// An undo of a bucket kind that must note a give-back cannot
		// while the slot migrates (its note key not on the node): its
		// reservation stays consumed, and the Take fails. Nothing else
		// fails.
		for _, err := range failed[k] {
			if (k != algorithms.TokenBucket && k != algorithms.LeakyBucket) || !strings.Contains(err.Error(), "names no note key") {
				t.Errorf("%v: concurrent cross-slot Take failed: %v", k, err)
			}
		}
		t.Logf("%v: %d of %d concurrent cross-slot Takes admitted, %d failed", k, admitted[k], takers, len(failed[k]))
		if admitted[k] > limit {
			t.Errorf("%v: %d of %d concurrent cross-slot Takes admitted, limit %d; failed: %v", k, admitted[k], takers, limit, failed[k])
		}
		checks := racing(k)
		got := make([]algorithms.Decision, len(checks))
		if err := store.Peek(ctx, got, checks); err != nil {
			t.Fatalf("%v: Peek after the concurrent Takes: %v", k, err)
		}
		for i, d := range got {
			if d.Remaining > limit-admitted[k] {
				t.Errorf("%v: %s has Remaining %d after %d admitted, limit %d", k, checks[i].Key, d.Remaining, admitted[k], limit)
			}
		}
	}
	for _, k := range algorithms.Kinds {
		same("after the migration", checksOf(k))
	}
}
