package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// A Redis that is down: after two failed calls the circuit opens, and the
// store answers ErrCircuitOpen at once, without waiting on Redis, until
// the cooldown has passed; then one call goes to Redis as a probe, and its
// failure opens the circuit for another cooldown. (The middleware turns
// each error into its failure mode: let the request through, refuse it,
// or decide on a fallback store.) The example runs without a server: a
// port nobody listens on stands for the Redis that is down, and a clock
// of its own stands for the time that passes.
func ExampleWithCircuitBreaker() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close() // nothing listens there now: every dial is refused

	client := redis.NewClient(&redis.Options{Addr: down, MaxRetries: -1, DialerRetries: 1})
	defer client.Close()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	store, err := redisstore.New(client,
		redisstore.WithClock(algorithms.ClockFunc(func() time.Time { return now })),
		redisstore.WithCircuitBreaker(2, 10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, Key: "user:42"}
	take := func(label string) {
		_, err := store.Take(context.Background(), check)
		switch {
		case errors.Is(err, redisstore.ErrCircuitOpen):
			fmt.Println(label, "circuit open: answered at once")
		case err != nil:
			fmt.Println(label, "sent to Redis: failed")
		default:
			fmt.Println(label, "decided")
		}
	}
	take("1st call:")
	take("2nd call:")
	take("3rd call:")
	now = now.Add(9 * time.Second)
	take("9 s later:")
	now = now.Add(time.Second)
	take("10 s later:")
	take("then:")
	// Output:
	// 1st call: sent to Redis: failed
	// 2nd call: sent to Redis: failed
	// 3rd call: circuit open: answered at once
	// 9 s later: circuit open: answered at once
	// 10 s later: sent to Redis: failed
	// then: circuit open: answered at once
}
