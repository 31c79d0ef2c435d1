package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	thredis "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// The benchmarks run against the shared local redis-server. The floor is
// what any Redis call costs: a PING, and an EVALSHA of a script that does
// nothing; Take is one EVALSHA, so it should stay close to them. And the
// floor of a decision: what any one-round-trip script that decides on the
// server's clock must do at the least (decisionScript).

var trivialScript = redis.NewScript("return 1")

// decisionScript does what a decision of one check on the server's clock
// cannot do without, and nothing else: it reads the server's TIME, GETs the
// check's key, SETs it with an expiry (PX), and replies with four integers,
// as Take's script does for one check (Allowed and Remaining, Delay or
// RetryAfter, ResetAfter, NextAfter). No arithmetic: a Take of one check
// costs at least this.
var decisionScript = redis.NewScript(`
local t = redis.call('TIME')
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], t[1] .. ' ' .. t[2], 'PX', '60000')
return {1, 2, 3, 4}
`)

// reportServerTime resets the server's command statistics, runs f, and
// reports the server's time per script call (EVALSHA and FCALL: the
// script's own cost, without the network) as srv-µs/op: a steadier figure
// than wall time on a busy machine.
func reportServerTime(b *testing.B, c *redis.Client, f func()) {
	ctx := context.Background()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	f()
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var calls, usec float64
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			rest, ok = strings.CutPrefix(line, "cmdstat_fcall:")
		}
		if !ok {
			continue
		}
		for _, field := range strings.Split(strings.TrimSpace(rest), ",") {
			name, v, _ := strings.Cut(field, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch name {
			case "calls":
				calls += x
			case "usec":
				usec += x
			}
		}
	}
	if calls > 0 {
		b.ReportMetric(usec/calls, "srv-µs/op")
	}
}

// benchClient is a client as the redisstore package doc recommends it:
// with ContextTimeoutEnabled, go-redis bounds its reads and writes by the
// context's deadline, so the store's timeout (DefaultTimeout) is a
// context deadline and nothing more. Without it the store runs each call
// whose context can end on a goroutine of its own, to return at the
// deadline (measured at c467b3a: one check 82.6 → 122.5 µs on this VM).
// The option changes nothing for the floor and the peers, whose calls carry
// no deadline.
func benchClient(b *testing.B) *redis.Client {
	b.Helper()
	srv := sharedServer(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16, ContextTimeoutEnabled: true})
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

// serialAndParallel runs op as sub-benchmarks "serial" and "parallel",
// reporting the server's time per call. newOp makes the op of one
// goroutine (its own buffers).
func serialAndParallel(b *testing.B, c *redis.Client, prefix string, newOp func() func() error) {
	b.Run(prefix+"serial", func(b *testing.B) {
		b.ReportAllocs()
		op := newOp()
		reportServerTime(b, c, func() {
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run(prefix+"parallel", func(b *testing.B) {
		b.ReportAllocs()
		reportServerTime(b, c, func() {
			b.RunParallel(func(pb *testing.PB) {
				op := newOp()
				for pb.Next() {
					if err := op(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	})
}

func BenchmarkFloorPing(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	serialAndParallel(b, c, "", func() func() error {
		return func() error { return c.Ping(ctx).Err() }
	})
}

func BenchmarkFloorEvalSha(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	serialAndParallel(b, c, "", func() func() error {
		return func() error { return trivialScript.Run(ctx, c, nil).Err() }
	})
}

// BenchmarkFloorDecision is decisionScript on one key: the floor of a Take
// of one check, with the server's own work in it.
func BenchmarkFloorDecision(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	keys := []string{uniquePrefix(b) + "floor"}
	serialAndParallel(b, c, "", func() func() error {
		return func() error { return decisionScript.Run(ctx, c, keys).Err() }
	})
}

// BenchmarkTake is Take with 1 and 4 checks, on the server's clock, serial
// and parallel (RunParallel's default: one goroutine per CPU, on the
// client's pool of 16 connections, all on one key: the checks of one client
// contend in Redis, which runs scripts one at a time).
func BenchmarkTake(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	for _, n := range []int{1, 4} {
		s, err := redisstore.New(c, redisstore.WithPrefix(uniquePrefix(b)))
		if err != nil {
			b.Fatal(err)
		}
		checks := benchChecks(n)
		serialAndParallel(b, c, "checks="+strconv.Itoa(n)+"/", func() func() error {
			dst := make([]algorithms.Decision, n)
			return func() error { return s.TakeInto(ctx, dst, checks) }
		})
	}
}

// BenchmarkRedisRate is go-redis/redis_rate (v10) where it fits: its GCRA
// Allow with one limit, never reached, on the same server: one decision
// per call, like Take with one check.
func BenchmarkRedisRate(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	limiter := redis_rate.NewLimiter(c)
	limit := redis_rate.Limit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
	key := uniquePrefix(b) + "-bench-client"
	serialAndParallel(b, c, "", func() func() error {
		return func() error {
			_, err := limiter.Allow(ctx, key, limit)
			return err
		}
	})
}

// BenchmarkUlule is ulule/limiter (v3) over its Redis store on the same
// server: one fixed-window counter per call (one EVALSHA), never reached.
func BenchmarkUlule(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	st, err := ulredis.NewStoreWithOptions(c, ulule.StoreOptions{Prefix: uniquePrefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	l := ulule.New(st, ulule.Rate{Period: time.Second, Limit: 1_000_000})
	serialAndParallel(b, c, "", func() func() error {
		return func() error {
			_, err := l.Get(ctx, "bench-client")
			return err
		}
	})
}

// BenchmarkThrottled is throttled's GCRA over its go-redis v9 store on the
// same server: a GET with the server's TIME, then a compare-and-swap script
// (two round trips per call), never reached. Serial only: in parallel on
// one key its compare-and-swap loses races, and a call that loses ten in a
// row fails ("Failed to store updated rate limit data ... after 10
// attempts").
func BenchmarkThrottled(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	st, err := thredis.NewCtx(c, uniquePrefix(b))
	if err != nil {
		b.Fatal(err)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate:  throttled.PerSec(1_000_000),
		MaxBurst: 999_999,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		reportServerTime(b, c, func() {
			for b.Loop() {
				if _, _, err := rl.RateLimitCtx(ctx, "bench-client", 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
