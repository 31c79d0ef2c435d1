package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/didip/tollbooth/v7"
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

// throttledByIP is throttled's HTTPRateLimiterCtx (GCRA over memstore,
// X-RateLimit headers), varying by RemoteAddr.
func throttledByIP(b *testing.B) func(http.Handler) http.Handler {
	st, err := memstore.NewCtx(0)
	if err != nil {
		b.Fatal(err)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
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
// an expirable cache), looking the IP up in RemoteAddr only. tollbooth
// takes a rate per second only: MaxLimit per second, far above the run as
// the others' quotas are.
func tollboothByIP() func(http.Handler) http.Handler {
	lmt := tollbooth.NewLimiter(float64(algorithms.MaxLimit), nil)
	lmt.SetIPLookups([]string{"RemoteAddr"})
	return func(next http.Handler) http.Handler { return tollbooth.LimitHandler(lmt, next) }
}
