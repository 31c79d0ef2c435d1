package algorithms_test

import (
	"context"
	"testing"
	"time"

	golimiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
)

// The peers the issue names besides httprate and x/time/rate, each in its
// in-memory form with the same limit (benchLimit per hour): throttled's
// GCRA over its memstore (bounded, see throttledMaxKeys),
// sethvargo/go-limiter's token bucket (memorystore), and ulule/limiter's
// fixed window (memory store). Each reads its own clock: they run only in
// the "clock" benchmarks.

// throttledDecider is throttled's GCRA rate limiter over memstore, bounded
// as its README and examples make it.
type throttledDecider struct{ rl *throttled.GCRARateLimiterCtx }

func (d throttledDecider) allow(key string) bool {
	_, _, err := d.rl.RateLimitCtx(context.Background(), key, 1)
	return err == nil
}

// throttledMaxKeys is the key bound of throttled's memstore in the
// decision benchmarks, as its README and examples make it
// (memstore.NewCtx(65536)): an LRU list, as in production, holding every
// key of BenchmarkKeysParallel. memstore.NewCtx(0), which these benchmarks
// used, is its unbounded mode (a map under an RWMutex, no eviction),
// cheaper per decision than the LRU (whose Get takes an exclusive lock to
// move the key to the front) and not what its documentation sets up.
// BenchmarkMemoryPerKey bounds it at its million keys instead, as a user
// sizing it for them would, so that it holds all of them as ours does.
const throttledMaxKeys = 65536

// throttledStore returns throttled's memstore bounded at maxKeys.
func throttledStore(tb testing.TB, maxKeys int) throttled.GCRAStoreCtx {
	st, err := memstore.NewCtx(maxKeys)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func newThrottled(b testing.TB, maxKeys int) decider {
	rl, err := throttled.NewGCRARateLimiterCtx(throttledStore(b, maxKeys), throttled.RateQuota{
		MaxRate:  throttled.PerDuration(benchLimit, time.Hour),
		MaxBurst: benchLimit - 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	return throttledDecider{rl}
}

// goLimiterDecider is go-limiter's memorystore Take.
type goLimiterDecider struct{ s golimiter.Store }

func (d goLimiterDecider) allow(key string) bool {
	_, _, _, _, err := d.s.Take(context.Background(), key)
	return err == nil
}

func newGoLimiter(b *testing.B) decider {
	s, err := memorystore.New(&memorystore.Config{Tokens: benchLimit, Interval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	// Its sweeper goroutine stops with Close.
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	return goLimiterDecider{s}
}

// ululeDecider is ulule/limiter's Get (count one request) over its memory
// store.
type ululeDecider struct{ l *ulule.Limiter }

func (d ululeDecider) allow(key string) bool {
	_, err := d.l.Get(context.Background(), key)
	return err == nil
}

func newUlule() decider {
	return ululeDecider{ulule.New(ulmemory.NewStore(), ulule.Rate{Period: time.Hour, Limit: benchLimit})}
}
