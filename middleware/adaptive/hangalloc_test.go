package adaptive_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// observeOnly hides a Controller's Begin: the middleware feeds it as it
// fed any Feedback before requests in flight were counted.
type observeOnly struct{ c *adaptive.Controller }

func (o observeOnly) Observe(latency time.Duration, status int) { o.c.Observe(latency, status) }

// TestFeedbackBeginAllocatesNothing: counting a request in flight (Begin,
// and End once it is over) costs the middleware's SetFeedback path no
// allocation: a request fed to a Controller allocates no more than one
// fed to a Feedback that is only told how it ended.
func TestFeedbackBeginAllocatesNothing(t *testing.T) {
	m := newMiddleware(t, 1_000_000_000)
	c, err := adaptive.New(m, adaptive.Config{Clock: algotest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest("GET", "/", nil)
	// testing.AllocsPerRun counts the allocations of the whole process:
	// another goroutine's during the 200 requests (one a test before left
	// running, say) count as theirs, and 200 of them make a request seem
	// to cost one more. They only ever add to the request's own, the same
	// each time (6 here): the fewest of a few measurements is that count.
	allocs := func() float64 {
		h.ServeHTTP(httptest.NewRecorder(), r)
		fewest := math.Inf(1)
		for range 5 {
			fewest = min(fewest, testing.AllocsPerRun(200, func() { h.ServeHTTP(httptest.NewRecorder(), r) }))
		}
		return fewest
	}
	m.SetFeedback(observeOnly{c})
	observed := allocs()
	m.SetFeedback(c)
	if got := allocs(); got > observed {
		t.Errorf("%v allocations per request fed to a Controller, want at most %v (Observe alone)", got, observed)
	}
}
