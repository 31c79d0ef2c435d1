package prommetrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRebuildsUnderTraffic: requests through the current middleware, a
// rebuilder replacing it with one built anew (every generation given the
// one Metrics, the old one closed once replaced), reloads in place of
// the current one dropping and adding a policy, and scrapes, all at once
// (for -race). Afterwards requests_total adds up to the requests served,
// and the limit gauges are the last middleware's alone: no policy of a
// closed generation is left.
func TestRebuildsUnderTraffic(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	build := func(gen int) *middleware.Middleware {
		return middleware.MustNew(mem, []*policy.Policy{fixed("kept", 1_000_000, remote), fixed(fmt.Sprint("gen", gen), 1_000_000, remote)},
			middleware.WithObserver(metrics))
	}
	var cur atomic.Pointer[middleware.Middleware]
	cur.Store(build(0))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur.Load().Handler(http.NotFoundHandler()).ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	mux.Handle("GET /", h)

	var wg sync.WaitGroup
	const workers, perWorker, gens = 4, 200, 40
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = fmt.Sprintf("192.0.2.%d:%d", w, 1000+i)
				mux.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
	var rebuilt sync.Mutex // the rebuilder and the reloader take turns on cur
	wg.Go(func() {
		for gen := 1; gen <= gens; gen++ {
			m := build(gen)
			rebuilt.Lock()
			old := cur.Swap(m)
			rebuilt.Unlock()
			old.Close()
		}
	})
	wg.Go(func() {
		for i := range gens {
			rebuilt.Lock()
			m := cur.Load()
			ps := []*policy.Policy{m.Configured("kept")}
			if i%2 == 0 {
				ps = append(ps, fixed("flapping", 5, remote))
			}
			for _, p := range m.Set().Policies() {
				if p.Name() != "kept" && p.Name() != "flapping" {
					ps = append(ps, m.Configured(p.Name()))
				}
			}
			err := m.SetPolicies(ps)
			rebuilt.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for range gens {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	hangguard.Run(t, time.Minute, "requests, rebuilds, reloads and scrapes", wg.Wait)

	if got := testutil.ToFloat64(metrics.ErrorCounter("kept", "store")); got != 0 {
		t.Errorf("store errors %v", got)
	}
	allowed, err := gatherValue(reg, "ratekeeper_requests_total", "policy", "kept", "outcome", "allowed")
	if err != nil {
		t.Fatal(err)
	}
	if allowed != workers*perWorker {
		t.Errorf("kept allowed %v, want %d", allowed, workers*perWorker)
	}
	// The last middleware's policies alone (flapping as its last reload
	// left it: dropped, gens being even).
	wantLimits(t, reg, "after the last rebuild", "gen40=1000000", "kept=1000000")
	runtime.KeepAlive(cur.Load()) // serving to the end: a middleware collected is counted out
}

// gatherValue returns the value of the counter or gauge series of family
// name with the label pairs given (a histogram's: its count), gathered
// from g.
func gatherValue(g prometheus.Gatherer, name string, labels ...string) (float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue series
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), nil
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount()), nil
			}
			return m.GetGauge().GetValue(), nil
		}
	}
	return 0, fmt.Errorf("no series %s%v", name, labels)
}
