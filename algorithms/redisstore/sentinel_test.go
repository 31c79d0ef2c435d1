package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestSentinel: a store on a Sentinel failover client (a master found
// through a real Sentinel) decides like any other.
func TestSentinel(t *testing.T) {
	master := redistest.New(t)
	sentinel, err := redistest.StartSentinel(t.TempDir(), "rkmaster", master)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sentinel.Stop() })
	client := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "rkmaster", SentinelAddrs: []string{sentinel.Addr}})
	defer client.Close()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: 24 * time.Hour}, Key: "k"}
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		d, err := s.Take(ctx, check)
		if err != nil {
			t.Fatalf("Take %d through Sentinel: %v", i, err)
		}
		if d[0].Allowed != want {
			t.Fatalf("Take %d = %+v, want Allowed %v", i, d[0], want)
		}
	}
	// The state is on the master Sentinel named.
	if n, err := master.Do("DBSIZE"); err != nil || n != "1" {
		t.Fatalf("DBSIZE on the master = %q, %v; want 1", n, err)
	}
}
