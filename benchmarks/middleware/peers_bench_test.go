package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/didip/tollbooth/v7"
	"github.com/didip/tollbooth/v7/limiter"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// peerWindow is the window of every peer's quota (algorithms.MaxLimit
// requests per peerWindow), as of the one-policy middleware's policy.
const peerWindow = time.Minute

// The peer middlewares the issue names besides httprate, each keyed by the
// client IP from RemoteAddr, in memory, with a limit far above the run (so
// every request is allowed), as each one's documentation sets it up.

// throttledMaxKeys is the key bound of throttled's memstore, as its README
// and examples make it (memstore.NewCtx(65536)): bounded, with an LRU
// list, as in production. memstore.NewCtx(0), which this harness used, is
// its unbounded mode (a map under an RWMutex, no eviction), cheaper per
// request than the LRU (whose Get takes an exclusive lock to move the key
// to the front) and not what its documentation sets up.
const throttledMaxKeys = 65536

// throttledStore returns throttled's memstore bounded at throttledMaxKeys.
func throttledStore(tb testing.TB) throttled.GCRAStoreCtx {
	st, err := memstore.NewCtx(throttledMaxKeys)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// throttledByIP is throttled's HTTPRateLimiterCtx (GCRA over memstore,
// X-RateLimit headers), varying by RemoteAddr.
func throttledByIP(b *testing.B) func(http.Handler) http.Handler {
	rl, err := throttled.NewGCRARateLimiterCtx(throttledStore(b), throttled.RateQuota{
		MaxRate:  throttled.PerDuration(algorithms.MaxLimit, peerWindow),
		MaxBurst: algorithms.MaxLimit - 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	h := &throttled.HTTPRateLimiterCtx{RateLimiter: rl, VaryBy: &throttled.VaryBy{RemoteAddr: true}}
	return h.RateLimit
}

// goLimiterByIP is sethvargo/go-limiter's httplimit middleware over its
// memorystore, keyed by the RemoteAddr IP.
func goLimiterByIP(b *testing.B) func(http.Handler) http.Handler {
	st, err := memorystore.New(&memorystore.Config{Tokens: algorithms.MaxLimit, Interval: peerWindow})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close(context.Background()) })
	m, err := httplimit.NewMiddleware(st, httplimit.IPKeyFunc())
	if err != nil {
		b.Fatal(err)
	}
	return m.Handle
}

// ululeByIP is ulule/limiter's stdlib middleware over its memory store.
func ululeByIP() func(http.Handler) http.Handler {
	l := ulule.New(ulmemory.NewStore(), ulule.Rate{Period: peerWindow, Limit: algorithms.MaxLimit})
	return stdlib.NewMiddleware(l).Handler
}

// tollboothByIP is tollbooth's LimitHandler (x/time/rate token buckets in
// an expirable cache) with the peers' quota, keyed by the IP from
// RemoteAddr (see tollboothLimiter).
func tollboothByIP() func(http.Handler) http.Handler {
	lmt := tollboothLimiter(algorithms.MaxLimit)
	return func(next http.Handler) http.Handler { return tollbooth.LimitHandler(lmt, next) }
}

// tollboothLimiter returns a tollbooth limiter of limit requests per
// peerWindow, keyed by the IP from RemoteAddr alone.
//
// tollbooth takes a rate per second only: limit per peerWindow is a token
// bucket filling at limit/peerWindow with a burst of limit (the harness
// gave it limit per second, with that burst). Its key is the IP and the
// URL path unless told to ignore the URL (SetIgnoreURL): the others key by
// the IP alone. Its token buckets expire after an hour, as its README sets
// up expirable buckets; with no expiry (nil options) they are kept for ten
// years and the cache is never pruned.
func tollboothLimiter(limit int64) *limiter.Limiter {
	lmt := tollbooth.NewLimiter(float64(limit)/peerWindow.Seconds(), &limiter.ExpirableOptions{DefaultExpirationTTL: time.Hour})
	lmt.SetBurst(int(limit))
	lmt.SetIPLookups([]string{"RemoteAddr"})
	lmt.SetIgnoreURL(true)
	return lmt
}
