package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLevelChangeKeepsClientsUsage: a Controller lowers a policy's limit
// because the service is in trouble; a client that had used its quota in
// the current window must not get a fresh one at the new level. A new
// level is a new Spec, whose counters start afresh, so the lowered policy
// is guarded by its configured Spec (policy.Policy.Guard), whose counters
// every request keeps counting in. Here a client of a 100-per-minute
// policy sends 100 requests, the limit drops to 80 ten seconds later, and
// the same client must not be admitted more in that minute (it was
// admitted 80 more, 180 in all, before the guard); in the next minute it
// gets the new level's 80.
// It runs on the memory store and on Redis alike.
func TestLevelChangeKeepsClientsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0) // a minute boundary
			store := storetest.New(t, name, clock)
			levelChangeKeepsUsage(t, store, clock)
		})
	}
}

func levelChangeKeepsUsage(t *testing.T, store algorithms.Store, clock *algotest.Clock) {
	p := policy.Must(policy.New("per-ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, ip))
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: 10 * time.Second, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	send := func(n int) {
		for range n {
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code == http.StatusOK {
				admitted++
			}
		}
	}
	send(101)
	if admitted != 100 {
		t.Fatalf("at the configured limit: %d of 101 admitted, want 100", admitted)
	}
	// A slow and failing period: the limit drops to 80%.
	for i := range 100 {
		status := 200
		if i < 5 {
			status = 503
		}
		c.Observe(30*time.Millisecond, status)
	}
	clock.Advance(10 * time.Second)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := m.Set().Policy(0).Spec().Limit; got != 80 {
		t.Fatalf("after a bad period the limit is %d, want 80", got)
	}
	send(80) // still in the first minute
	if admitted > 100 {
		t.Errorf("the client was admitted %d requests in one minute, at limits of 100 and then 80: a level change gave it a fresh quota", admitted)
	}
	clock.Advance(50 * time.Second) // the next minute
	admitted = 0
	send(81)
	if admitted != 80 {
		t.Errorf("in the next minute at a limit of 80: %d of 81 admitted, want 80", admitted)
	}
}
