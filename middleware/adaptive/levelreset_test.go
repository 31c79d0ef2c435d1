package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLevelChangeKeepsClientsUsage: a Controller lowers a policy's limit
// because the service is in trouble; a client that had used its quota in
// the current window must not get a fresh one at the new level. It does:
// the stores key their state by Spec, and a new level is a new Spec, so
// each level change starts every client's counters afresh (documented in
// the package doc, "How the limit reaches the requests"). Here a client
// of a 100-per-minute policy sends 100 requests, the limit drops to 80
// ten seconds later, and the same client is admitted 80 more in the same
// minute: 180, more than either level admits in a window, and more load
// while the service is in trouble, the opposite of what lowering the
// limit is for. Carrying the usage over is not this package's to do: it
// needs packages policy and algorithms (a level's state keyed apart from
// its Limit and Burst, policy.Policy.WithLimit, or a store operation that
// carries a key's state from the old Spec to the new, in both stores). It
// runs when RATEKEEPER_KNOWN_DEFECTS is set.
func TestLevelChangeKeepsClientsUsage(t *testing.T) {
	if os.Getenv("RATEKEEPER_KNOWN_DEFECTS") == "" {
		t.Skip("known defect (a level change starts clients' counters afresh); set RATEKEEPER_KNOWN_DEFECTS=1 to run")
	}
	clock := algotest.NewClock(t0) // a minute boundary
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
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
}
