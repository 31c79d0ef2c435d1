package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// Two application instances, each with its own client and store, share one
// limit: 3 requests per minute for a client key. The example needs a Redis
// server at localhost:6379, so it has no Output line and only compiles in
// tests; the package tests run the same scenario against a redis-server
// they start.
func Example() {
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: time.Minute}
	var stores []*redisstore.Store
	for range 2 {
		client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
		defer client.Close()
		store, err := redisstore.New(client, redisstore.WithPrefix("example"),
			redisstore.WithTimeout(250*time.Millisecond), redisstore.WithCircuitBreaker(5, 10*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		stores = append(stores, store)
	}
	for i := range 4 {
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		d, err := stores[i%2].Take(ctx, algorithms.Check{Spec: spec, Key: "user:42"})
		cancel()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("instance %d: allowed=%v remaining=%d\n", i%2, d[0].Allowed, d[0].Remaining)
	}
}

// A Take with stacked checks is one script call, all or nothing: when the
// per-route check denies (its 100 logins a minute are spent), the per-user
// check that would pass consumes nothing either. On a fresh server both
// pass, and this prints true.
func ExampleStore_Take_stacked() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	store, err := redisstore.New(client)
	if err != nil {
		log.Fatal(err)
	}
	perUser := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second}, Key: "user:42"}
	perRoute := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, Key: "POST /login"}
	d, err := store.Take(context.Background(), perUser, perRoute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d[0].Allowed && d[1].Allowed)
}
