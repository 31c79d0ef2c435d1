package prommetrics_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// backClock goes 2ms back at every reading: a wall clock set back (NTP)
// in the middle of a decision, as an injected clock without a monotonic
// reading can be.
type backClock struct{ ns atomic.Int64 }

func (c *backClock) Now() time.Time {
	return t0.Add(-time.Duration(c.ns.Add(int64(2 * time.Millisecond))))
}

// TestDecisionSecondsNeverBackwards: ratekeeper_decision_seconds_sum is
// read with rate() as a counter; a negative latency (the middleware's
// clock set back during a decision) made it go backwards. A latency below
// zero is recorded as zero.
func TestDecisionSecondsNeverBackwards(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("p", 100, remote)},
		middleware.WithObserver(metrics), middleware.WithClock(&backClock{}))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	prev := 0.0
	for i := range 3 {
		serve(h)
		sum, count := histogram(t, reg, "ratekeeper_decision_seconds")
		if count != uint64(i+1) {
			t.Fatalf("count %d after %d requests", count, i+1)
		}
		if sum < prev || sum < 0 {
			t.Errorf("after request %d: decision_seconds_sum %v, was %v: went backwards", i+1, sum, prev)
		}
		prev = sum
	}
}

// histogram returns the sum and count of the histogram named name, as a
// scrape reads them.
func histogram(t *testing.T, reg prometheus.Gatherer, name string) (sum float64, count uint64) {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	found := 0
	for sc := bufio.NewScanner(w.Body); sc.Scan(); {
		field, value, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch field {
		case name + "_sum":
			sum, err = strconv.ParseFloat(value, 64)
			found++
		case name + "_count":
			count, err = strconv.ParseUint(value, 10, 64)
			found++
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if found != 2 {
		t.Fatalf("no %s_sum and _count in the scrape", name)
	}
	return sum, count
}
