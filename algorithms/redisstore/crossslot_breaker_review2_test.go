package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestClusterBreakerIsOneForEveryNode: the store's circuit breaker counts
// the calls of every node of a Cluster together. With one master down
// (no replica to take over), Takes of its keys fail and open the circuit,
// and then Takes of keys the other masters serve, which Redis would
// decide, return ErrCircuitOpen until the cooldown ends (the
// WithCircuitBreaker documentation says so).
func TestClusterBreakerIsOneForEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	s, err := redisstore.New(client, redisstore.WithTimeout(time.Second), redisstore.WithCircuitBreaker(2, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sp := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	down := algorithms.Check{Spec: sp, Key: "user-2"} // slot 157: node 0
	up := algorithms.Check{Spec: sp, Key: "user-1"}   // slot 12542: node 2
	for _, c := range []algorithms.Check{down, up} {
		if d, err := s.Take(ctx, c); err != nil || !d[0].Allowed {
			t.Fatalf("Take(%s) with every node up = %+v, %v", c.Key, d, err)
		}
	}
	if err := cl.Nodes[0].Stop(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := s.Take(ctx, down); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Fatalf("Take %d of a key of the stopped node: %v; want its failure", i, err)
		}
	}
	if _, err := s.Take(ctx, up); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take of a key of a node that is up, after two failures of the stopped node's = %v; want ErrCircuitOpen (one breaker for the cluster)", err)
	}
}
