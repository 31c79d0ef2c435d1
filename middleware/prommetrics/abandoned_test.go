package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAbandonedCounted: a request the middleware evaluated but did not
// serve, its context over (Abandoned), is counted once under each
// evaluated policy as requests_total{outcome="abandoned"}: one a
// leaky_queue refuses with 503 at once because its deadline comes before
// its turn, one held whose client goes away during the hold, and one
// whose client went away before the decision. Before, they counted in no
// counter (a 503 of the limiter that no series showed); none is a store
// error, nor allowed. Through a ServeMux with the memory store and a
// manual clock; a request held and served counts as allowed.
func TestAbandonedCounted(t *testing.T) {
	reg, metrics, _ := metricsAndStore(t) // its store runs on a clock of its own
	clock := algotest.NewClock(t0)
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}, remote))
	// The client of the request cut short goes away while it is held.
	var leave context.CancelFunc
	wait := func(ctx context.Context, d time.Duration) error {
		if leave != nil {
			leave()
			<-ctx.Done()
			return ctx.Err()
		}
		return clock.Sleep(ctx, d)
	}
	m := middleware.MustNew(ctxStore{&switchable{Store: mem}}, []*policy.Policy{queue, fixed("per-ip", 100, remote)},
		middleware.WithObserver(metrics), middleware.WithClock(clock), middleware.WithWait(wait),
		middleware.WithErrorHandler(func(*http.Request, error) {}))
	metrictest.KeepAlive(t, m)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(http.ResponseWriter, *http.Request) {})
	h := m.Handler(mux)
	do := func(ctx context.Context) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		return w.Code
	}
	bg := context.Background()
	for i := range 2 { // the first goes at once, the second is held 1s
		if code := do(bg); code != http.StatusOK {
			t.Fatalf("request %d: %d, want 200", i, code)
		}
	}
	// Its turn is 1s away; its deadline is sooner.
	soon, cancelSoon := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancelSoon()
	if code := do(soon); code != http.StatusServiceUnavailable {
		t.Fatalf("deadline before its turn: %d, want 503", code)
	}
	held, cancelHeld := context.WithCancel(bg)
	leave = cancelHeld
	if code := do(held); code != http.StatusServiceUnavailable {
		t.Fatalf("client gone while held: %d, want 503", code)
	}
	leave = nil
	gone, cancelGone := context.WithCancel(bg)
	cancelGone()
	if code := do(gone); code != http.StatusServiceUnavailable {
		t.Fatalf("client gone before the decision: %d, want 503", code)
	}
	if got := m.Stats().Abandoned; got != 3 {
		t.Fatalf("Stats().Abandoned = %d, want 3", got)
	}
	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="per-ip"} 3
ratekeeper_requests_total{outcome="abandoned",policy="queue"} 3
ratekeeper_requests_total{outcome="allowed",policy="per-ip"} 2
ratekeeper_requests_total{outcome="allowed",policy="queue"} 2
ratekeeper_requests_total{outcome="denied",policy="per-ip"} 0
ratekeeper_requests_total{outcome="denied",policy="queue"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="per-ip"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="queue"} 0
# HELP ratekeeper_errors_total Failures per policy and kind (store, key, cost).
# TYPE ratekeeper_errors_total counter
ratekeeper_errors_total{kind="cost",policy="per-ip"} 0
ratekeeper_errors_total{kind="cost",policy="queue"} 0
ratekeeper_errors_total{kind="key",policy="per-ip"} 0
ratekeeper_errors_total{kind="key",policy="queue"} 0
ratekeeper_errors_total{kind="store",policy="per-ip"} 0
ratekeeper_errors_total{kind="store",policy="queue"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_requests_total", "ratekeeper_errors_total"); err != nil {
		t.Error(err)
	}
}
