package redisstore_test

import (
	"context"
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

// TestClusterSlotMigratingToANewNode: a master added to the cluster after
// the store loaded its library (FUNCTION LOAD on every master the client
// knows, which are the masters serving slots) does not have it. While a
// slot migrates to that node (CLUSTER SETSLOT IMPORTING / MIGRATING, then
// MIGRATE of its keys: what redis-cli --cluster reshard does), a Take of a
// key already moved is redirected there with ASK, and must still be
// decided, on the moved state. (Before the fix the FCALL answered
// "Function not found" there, the store loaded the library again on the
// masters it knew, which did not include the new node, and the Take
// failed: every Take of a moved key failed until the migration ended.)
func TestClusterSlotMigratingToANewNode(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster and a fourth node; run without -short")
	}
	cl := redistest.NewCluster(t)
	fresh, err := redistest.Start(t.TempDir(), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fresh.Stop() })
	do := mustDo(t)
	do(fresh, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(cl.Nodes[0].Port))
	all := append(cl.Nodes[:], fresh)
	if !hangguard.Poll(30*time.Second, 20*time.Millisecond, func() bool {
		for _, n := range all {
			if info, err := n.Do("CLUSTER", "INFO"); err != nil || !strings.Contains(info, "cluster_known_nodes:4") || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the fourth node did not join the cluster in 30s")
	}

	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	store, err := redisstore.New(client, redisstore.WithPrefix("mig"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour}, Key: "client-7"}
	take := func() (algorithms.Decision, error) {
		d, err := store.Take(ctx, check)
		if err != nil {
			return algorithms.Decision{}, err
		}
		return d[0], nil
	}
	// The first Take loads the library on the three masters and counts 1.
	if d, err := take(); err != nil || !d.Allowed || d.Remaining != 2 {
		t.Fatalf("first Take = %+v, %v; want admitted with Remaining 2", d, err)
	}
	if libs := do(fresh, "FUNCTION", "LIST"); libs != "" {
		t.Fatalf("the new node has libraries %q; the test needs one without", libs)
	}

	// Migrate the key's slot to the new node, its key first.
	slot := do(cl.Nodes[0], "CLUSTER", "KEYSLOT", "client-7")
	n, _ := strconv.Atoi(slot)
	src := cl.Nodes[n*3/16384]
	key := "mig:{client-7}:fw:3:3600000000000:0:0:0"
	if got := do(src, "EXISTS", key); got != "1" {
		t.Fatalf("EXISTS %s on the slot's owner %s = %s, want 1 (the key layout changed?)", key, src.Addr, got)
	}
	srcID, freshID := do(src, "CLUSTER", "MYID"), do(fresh, "CLUSTER", "MYID")
	do(fresh, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	do(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", freshID)
	do(src, "MIGRATE", "127.0.0.1", strconv.Itoa(fresh.Port), "", "0", "5000", "KEYS", key)
	for _, n := range cl.Nodes {
		do(n, "CONFIG", "RESETSTAT")
	}

	// The key is on the new node now: the Take is sent there (ASK) and
	// counts the second unit.
	d, err := take()
	if err != nil {
		t.Fatalf("Take while the slot migrates, its key moved: %v", err)
	}
	if !d.Allowed || d.Remaining != 1 {
		t.Fatalf("Take while the slot migrates = %+v, want admitted with Remaining 1 (the moved state)", d)
	}

	// A call that gives units back, sent at most once, goes there too: the
	// second unit is given back.
	given := make([]algorithms.Refunded, 1)
	if err := store.GiveBack(ctx, given, []algorithms.Check{check}, []algorithms.Decision{d}, 0); err != nil || !given[0].Given {
		t.Fatalf("GiveBack while the slot migrates = %+v, %v; want the unit given back", given[0], err)
	}

	// Peeks too; and the calls that find the function missing there do not
	// each load the library (about 120 kB) on every master again: one load
	// at most, then the script.
	for range 5 {
		pk := make([]algorithms.Decision, 1)
		if err := store.Peek(ctx, pk, []algorithms.Check{check}); err != nil || pk[0].Remaining != 2 {
			t.Fatalf("Peek while the slot migrates = %+v, %v; want Remaining 2", pk[0], err)
		}
	}
	loads := 0
	for _, n := range cl.Nodes {
		for line := range strings.Lines(do(n, "INFO", "commandstats")) {
			if rest, ok := strings.CutPrefix(line, "cmdstat_function|load:calls="); ok {
				c, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				loads += c
			}
		}
	}
	if loads > len(cl.Nodes) {
		t.Errorf("7 calls while the slot migrates loaded the library %d times on the %d masters, want one load each at most", loads, len(cl.Nodes))
	}

	// The migration ends: the slot is the new node's (MOVED), and the
	// state is still there.
	for _, nd := range all {
		do(nd, "CLUSTER", "SETSLOT", slot, "NODE", freshID)
	}
	for want := int64(1); want >= 0; want-- {
		if d, err := take(); err != nil || !d.Allowed || d.Remaining != want {
			t.Fatalf("Take after the migration = %+v, %v; want admitted with Remaining %d", d, err, want)
		}
	}
	if d, err := take(); err != nil || d.Allowed {
		t.Fatalf("last Take = %+v, %v; want denied (Limit 3)", d, err)
	}
}
