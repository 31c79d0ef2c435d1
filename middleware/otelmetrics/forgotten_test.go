package otelmetrics_test

import (
	"log/slog"
	"net/http"
	"runtime"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForgottenMiddlewareLeavesNothing: a middleware the application
// drops without Close, its store failing (it fails open), given an
// Observer another middleware shares (WithObserver gives each its own
// ForMiddleware). Once it is garbage (nothing can call it: it enforces nothing), its policies'
// limit gauges stop and ratekeeper.failure_state no longer counts it. The
// live middleware's gauges stay.
func TestForgottenMiddlewareLeavesNothing(t *testing.T) {
	obs, reader := newObserver(t)
	mem := memStore(t)
	live := middleware.MustNew(mem, []*policy.Policy{fixed("live", 10, remote)}, middleware.WithObserver(obs))
	func() {
		down := &switchable{Store: mem}
		down.down.Store(true)
		m := middleware.MustNew(down, []*policy.Policy{fixed("forgotten", 5, remote)},
			middleware.WithObserver(obs), middleware.WithLogger(slog.New(slog.DiscardHandler)))
		get(m.Handler(http.NotFoundHandler()), "/")
	}()
	points, _ := collect(t, reader)
	if got := points["ratekeeper.failure_state{state=open}"]; got != 1 {
		t.Fatalf("failure_state{open} = %d with the store failing, want 1", got)
	}
	gone := func() bool {
		points, _ := collect(t, reader)
		_, limit := points["ratekeeper.effective_limit{policy=forgotten}"]
		return !limit && points["ratekeeper.failure_state{state=open}"] == 0
	}
	for i := 0; i < 1000 && !gone(); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	wantLimitPoints(t, reader, "the forgotten middleware collected",
		"ratekeeper.configured_limit{policy=live} 10",
		"ratekeeper.effective_limit{policy=live} 10")
	points, _ = collect(t, reader)
	wantLines(t, "failure_state", only(points, "ratekeeper.failure_state"),
		"ratekeeper.failure_state{state=closed} 0",
		"ratekeeper.failure_state{state=fallback} 0",
		"ratekeeper.failure_state{state=healthy} 1",
		"ratekeeper.failure_state{state=open} 0")
	runtime.KeepAlive(live)
}
