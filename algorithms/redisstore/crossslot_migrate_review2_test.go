package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestCrossSlotTakeWhileSlotMigrates: while a slot migrates (CLUSTER
// SETSLOT IMPORTING and MIGRATING, its keys moved by MIGRATE: what
// redis-cli --cluster reshard does), Redis serves a call of several keys
// of that slot only where all of them exist, and a reservation names its
// marker, a key no node holds yet: a cross-slot Take with a check in that
// slot fails with TRYAGAIN, every kind, whether the slot's keys are still
// at the source or already at the target, and its other slots'
// reservations are undone (a Peek shows them as before). A Peek, and a
// plain Take of the slot's key alone, are decided meanwhile; once the
// migration ends the cross-slot Takes decide again, on the moved state,
// as the memory store does. (The package documentation says so under
// "Cluster".)
func TestCrossSlotTakeWhileSlotMigrates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	do := func(s *redistest.Server, args ...string) string {
		t.Helper()
		v, err := s.Do(args...)
		if err != nil {
			t.Fatalf("%v on %s: %v", args, s.Addr, err)
		}
		return v
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	clk := &manualClock{t: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)}
	store, err := redisstore.New(client, redisstore.WithPrefix("mig"), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// x (user-1) is on slot 12542 (node 2), y (user-2) on slot 157 (node
	// 0), which migrates to node 1.
	checksOf := func(k algorithms.Kind) []algorithms.Check {
		sp := smallSpec(k)
		return []algorithms.Check{{Spec: sp, Key: "user-1"}, {Spec: sp, Key: "user-2"}}
	}
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
	during := func(stage string) {
		t.Helper()
		for _, k := range algorithms.Kinds {
			checks := checksOf(k)
			if d, err := store.Take(ctx, checks...); err == nil || !strings.Contains(err.Error(), "TRYAGAIN") {
				t.Fatalf("%s: cross-slot Take(%+v) = %+v, %v; want TRYAGAIN", stage, checks, d, err)
			}
			peek(stage+", after the failed cross-slot Take", checks)
		}
		same(stage+", a Take of y alone", checksOf(algorithms.FixedWindow)[1:])
	}
	during("keys at the source")
	keys := do(cl.Nodes[0], "CLUSTER", "GETKEYSINSLOT", slot, "1000")
	do(cl.Nodes[0], append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(cl.Nodes[1].Port), "", "0", "5000", "KEYS"}, strings.Split(keys, "\n")...)...)
	during("keys at the target")
	for _, n := range cl.Nodes {
		do(n, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
	}
	for _, k := range algorithms.Kinds {
		same("after the migration", checksOf(k))
	}
}
