package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestReviewFailedTakeMayHaveConsumed: algorithms.Store.Take's
// documentation said "A Take that returns an error consumes nothing", but
// a Take whose reply is lost after Redis ran its script returns an error
// and has consumed (this package's documentation: "An error does not prove
// that nothing was consumed"). Only a Take refused as invalid is sure to
// have consumed nothing.
func TestReviewFailedTakeMayHaveConsumed(t *testing.T) {
	ctx := context.Background()
	proxy := newReplyDropper(t, sharedServer(t).Addr)
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	defer client.Close()
	clk := algotest.NewClock(algotest.Base)
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, Key: "k", Cost: 2}
	warmUp(t, client, algorithms.Check{Spec: c.Spec, Key: "warm"}) // loads the library
	proxy.armed.Store(true)
	if ds, err := store.Take(ctx, c); err == nil || proxy.dropped.Load() != 1 {
		t.Fatalf("Take whose reply was lost = %+v, %v (%d replies dropped); want an error", ds, err, proxy.dropped.Load())
	}
	peek := make([]algorithms.Decision, 1)
	if err := store.Peek(ctx, peek, []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if peek[0].Remaining != 3 {
		t.Fatalf("after a Take of 2 that returned an error, Remaining = %d; want 3 (it consumed)", peek[0].Remaining)
	}
}
