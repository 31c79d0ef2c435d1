package prommetrics_test

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForgottenMiddlewareWithItsRouterPattern: a middleware dropped
// without Close leaves the limit gauges once the garbage collector finds
// it unreachable, also when its rule set reaches it back: the pattern
// function of the chi router that uses the middleware
// (WithPatternFunc(policy.ChiPattern(r)) with r.Use(m.Handler), as
// WithPatternFunc's doc shows), in the set the metrics learn the windows
// from. What the Metrics keeps of that set must not keep the middleware
// reachable.
func TestForgottenMiddlewareWithItsRouterPattern(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	live := middleware.MustNew(mem, []*policy.Policy{fixed("live", 10, remote)}, middleware.WithObserver(metrics))
	func() {
		r := chi.NewRouter()
		m := middleware.MustNew(mem, []*policy.Policy{fixed("forgotten", 5, remote)},
			middleware.WithObserver(metrics), middleware.WithPatternFunc(policy.ChiPattern(r)))
		r.Use(m.Handler)
		r.Get("/", func(http.ResponseWriter, *http.Request) {})
		if code := serve(r); code != http.StatusOK {
			t.Fatalf("request: %d", code)
		}
	}()
	wantLimits(t, reg, "before the collection", "forgotten=5", "live=10")
	for i := 0; i < 1000; i++ {
		if n, err := testutil.GatherAndCount(reg, "ratekeeper_effective_limit"); err == nil && n == 1 {
			break
		}
		runtime.GC()
		runtime.Gosched()
	}
	wantLimits(t, reg, "the forgotten middleware collected", "live=10")
	runtime.KeepAlive(live)
}
