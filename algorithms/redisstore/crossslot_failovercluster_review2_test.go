package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestFailoverClusterClientSplitsBySlot: redis.NewFailoverClusterClient
// (a Sentinel-managed master and its replicas behind a
// *redis.ClusterClient, for reads routed to replicas) is a
// *redis.ClusterClient, and the store takes it for a Cluster: a Take whose
// keys hash to several slots runs in phases (peek, reservations), though
// one server holds every key and would run it as one script. It decides
// as the memory store does; the package documentation ("Cluster") says
// to use redis.NewFailoverClient for one script call per Take.
func TestFailoverClusterClientSplitsBySlot(t *testing.T) {
	master := redistest.New(t)
	sentinel, err := redistest.StartSentinel(t.TempDir(), "rkmaster", master)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sentinel.Stop() })
	client := redis.NewFailoverClusterClient(&redis.FailoverOptions{MasterName: "rkmaster", SentinelAddrs: []string{sentinel.Addr}})
	t.Cleanup(func() { _ = client.Close() })
	hook := &modeCountHook{}
	client.AddHook(hook)
	clk := &manualClock{t: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range algorithms.Kinds {
		sp := smallSpec(k)
		checks := []algorithms.Check{{Spec: sp, Key: "user-1"}, {Spec: sp, Key: "user-2"}}
		for range 4 {
			want, werr := mem.Take(ctx, checks...)
			got, gerr := s.Take(ctx, checks...)
			if werr != nil || gerr != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: Take = %+v, %v; memory %+v, %v", k, got, gerr, want, werr)
			}
		}
	}
	if hook.reserves.Load() == 0 {
		t.Fatal("no reservation: the Takes of two slots ran as one script call; say so in the package documentation (Cluster)")
	}
}
