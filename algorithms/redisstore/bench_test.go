package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// The benchmarks run against the shared local redis-server. The floor is
// what any Redis call costs: a PING, and an EVALSHA of a script that does
// nothing; Take is one EVALSHA, so it should stay close to them.

var trivialScript = redis.NewScript("return 1")

func benchClient(b *testing.B) *redis.Client {
	b.Helper()
	srv := sharedServer(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// benchChecks returns n checks on distinct specs and kinds under one key,
// with limits the benchmark never reaches (so every Take does its full
// work, writes included).
func benchChecks(n int) []algorithms.Check {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 10_000_000, Window: 10 * time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 10_000_000, Window: time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 1_000_000, Window: time.Second},
	}
	cs := make([]algorithms.Check, n)
	for i := range cs {
		cs[i] = algorithms.Check{Spec: specs[i%len(specs)], Key: "bench-client"}
	}
	return cs
}

func BenchmarkFloorPing(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if err := c.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := c.Ping(ctx).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkFloorEvalSha(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := trivialScript.Run(ctx, c, nil).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := trivialScript.Run(ctx, c, nil).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkTake is Take with 1 and 4 checks, on the server's clock, serial
// and parallel (16 goroutines' worth of connections on one key: the checks
// of one client contend in Redis, which runs scripts one at a time).
func BenchmarkTake(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	for _, n := range []int{1, 4} {
		s, err := redisstore.New(c, redisstore.WithPrefix(uniquePrefix(b)))
		if err != nil {
			b.Fatal(err)
		}
		checks := benchChecks(n)
		dst := make([]algorithms.Decision, n)
		name := map[int]string{1: "checks=1", 4: "checks=4"}[n]
		b.Run(name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.TakeInto(ctx, dst, checks); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]algorithms.Decision, n)
				for pb.Next() {
					if err := s.TakeInto(ctx, dst, checks); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
