package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestManyInstancesOneLimit: two stores, as two application instances with
// their own clients, hammer one key with 2 x 32 goroutines. At one frozen
// instant the total admitted is exactly the capacity, never more, for every
// kind; on the server's clock it never exceeds the capacity (the specs
// refill nothing measurable during the test).
func TestManyInstancesOneLimit(t *testing.T) {
	srv := sharedServer(t)
	for _, frozen := range []bool{true, false} {
		for _, kind := range algorithms.Kinds {
			name := string(kind) + "/server_time"
			if frozen {
				name = string(kind) + "/frozen_clock"
			}
			t.Run(name, func(t *testing.T) {
				spec := algorithms.Spec{Algorithm: kind, Limit: 50, Window: 24 * time.Hour}
				switch kind {
				case algorithms.SlidingBuckets:
					spec.Buckets = 24
				case algorithms.LeakyQueue:
					spec.MaxDelay = 12 * time.Hour // capacity 26
				}
				capacity := spec.Capacity()
				prefix := uniquePrefix(t)
				clk := &manualClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
				var stores [2]*redisstore.Store
				for i := range stores {
					c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 32})
					t.Cleanup(func() { _ = c.Close() })
					opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
					if frozen {
						opts = append(opts, redisstore.WithClock(clk))
					}
					s, err := redisstore.New(c, opts...)
					if err != nil {
						t.Fatal(err)
					}
					stores[i] = s
				}
				day0 := time.Now().Unix() / 86400
				var admitted, denied atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, 64)
				for g := range 64 {
					wg.Add(1)
					go func(s *redisstore.Store) {
						defer wg.Done()
						for range 3 {
							d, err := s.Take(context.Background(), algorithms.Check{Spec: spec, Key: "shared"})
							if err != nil {
								errs <- err
								return
							}
							if d[0].Allowed {
								admitted.Add(1)
							} else {
								denied.Add(1)
							}
						}
					}(stores[g%2])
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				got := admitted.Load()
				if !frozen && time.Now().Unix()/86400 != day0 {
					// A fixed window of a day may have reset at midnight UTC meanwhile.
					t.Skipf("skipping: the run crossed midnight UTC (admitted %d)", got)
				}
				if got > capacity {
					t.Fatalf("admitted %d of %d requests, more than the capacity %d", got, got+denied.Load(), capacity)
				}
				if frozen && got != capacity {
					t.Fatalf("admitted %d at one instant, want exactly the capacity %d", got, capacity)
				}
				if !frozen && got < capacity-1 {
					t.Fatalf("admitted %d, want about the capacity %d", got, capacity)
				}
			})
		}
	}
}
