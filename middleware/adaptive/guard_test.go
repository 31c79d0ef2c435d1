package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/nested"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// guards lists, per policy of m's rule set, whether it is guarded.
func guards(m *middleware.Middleware) []bool {
	var g []bool
	for _, p := range m.Set().Policies() {
		_, ok := p.Guard()
		g = append(g, ok)
	}
	return g
}

// folded reports whether res checks its i-th policy once, on its guard's
// state judged at its limit (nested.Ops.Folded, which package policy
// keeps off its API).
var folded = nested.Of[*policy.Result]().Folded

// TestFleetSharesUnguarded: a Fleet's shares of the cluster-wide limits
// of a bucket kind are set without the guard (a second check on every
// request for as long as the instances share the limit), a Controller's
// lowered levels with it. A window kind's share is judged on the
// configured Spec's counters, one check per request: its guard folded
// (nested.Ops.Folded), as SetLimit's.
func TestFleetSharesUnguarded(t *testing.T) {
	clock := algotest.NewClock(t0)
	m := newKindMiddleware(t, algorithms.TokenBucket, 100, 8)
	n := 4
	if _, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Clock: clock}); err != nil {
		t.Fatal(err)
	}
	if got, g := limitsOf(m), guards(m); got != "25,2" || g[0] || g[1] {
		t.Errorf("token_bucket, 4 instances: limits %s, guarded %v; want 25,2, neither guarded", got, g)
	}

	m = newMiddleware(t, 100, 8)
	if _, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Clock: clock}); err != nil {
		t.Fatal(err)
	}
	if got, g := limitsOf(m), guards(m); got != "25,2" || !g[0] || !g[1] {
		t.Errorf("sliding_window, 4 instances: limits %s, guarded %v; want 25,2, both guarded by the configured Spec", got, g)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := m.Set().Prepare(r, m.Set().Match(r), &res); err != nil {
		t.Fatal(err)
	}
	if res.Len() != 2 || !folded(&res, 0) || !folded(&res, 1) {
		t.Errorf("sliding_window, 4 instances: %d policies, folded %v %v; want 2, both checked once on the configured counters", res.Len(), folded(&res, 0), folded(&res, 1))
	}

	m = newKindMiddleware(t, algorithms.TokenBucket, 100, 8)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Minute, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	period(t, c, clock, 100, 5, 30*time.Millisecond) // slow and failing
	if got, g := limitsOf(m), guards(m); got != "80,6" || !g[0] || !g[1] {
		t.Errorf("a Controller's drop: limits %s, guarded %v; want 80,6, both guarded", got, g)
	}
}

// unguardless is a Target without SetLimitUnguarded: a Fleet sets its
// shares through SetLimit then.
type unguardless struct{ m *middleware.Middleware }

func (u unguardless) Set() *policy.Set                      { return u.m.Set() }
func (u unguardless) Configured(name string) *policy.Policy { return u.m.Configured(name) }
func (u unguardless) SetLimit(name string, limit int64) error {
	return u.m.SetLimit(name, limit)
}

// TestFleetSharesThroughSetLimit: a Target without SetLimitUnguarded gets
// the Fleet's shares through SetLimit, guarded.
func TestFleetSharesThroughSetLimit(t *testing.T) {
	m := newMiddleware(t, 100)
	if _, err := adaptive.NewFleet(unguardless{m}, adaptive.FleetConfig{Instances: func() int { return 2 }, Clock: algotest.NewClock(t0)}); err != nil {
		t.Fatal(err)
	}
	if got, g := limitsOf(m), guards(m); got != "50" || !g[0] {
		t.Errorf("2 instances through SetLimit: limits %s, guarded %v; want 50, guarded", got, g)
	}
}

// TestFleetUnguardedSharesInOneWindow: what one client gets from one
// instance, within one window, while a Fleet moves its shares of a
// cluster-wide limit of 12 (served through a ServeMux; the store's clock
// stands still, so every request falls in one window). For a window kind
// (sliding_window) the share in force, counting every request of the
// window: never more than the largest share held. For token_bucket, whose
// shares are unguarded, every share held, added up, as the package doc
// says.
func TestFleetUnguardedSharesInOneWindow(t *testing.T) {
	for _, tc := range []struct {
		kind   algorithms.Kind
		counts []int
		want   int
	}{
		{algorithms.SlidingWindow, []int{2, 3}, 6},    // 6 used, none of the 4
		{algorithms.SlidingWindow, []int{2, 3, 4}, 6}, // nor of the 3
		{algorithms.SlidingWindow, []int{2, 1}, 12},   // 6 more of the configured 12
		{algorithms.SlidingWindow, []int{3, 2}, 6},    // 4, then 2 more of the 6
		{algorithms.TokenBucket, []int{2, 3}, 6 + 4},  // one step up from two: within the cluster-wide limit
		{algorithms.TokenBucket, []int{2, 3, 4}, 13},  // every share held in the window, added up
		{algorithms.TokenBucket, []int{2, 1}, 6 + 12}, // the configured Spec's counters counted none of the share's
	} {
		m := newMiddleware(t, 12)
		if tc.kind == algorithms.TokenBucket {
			m = newKindMiddleware(t, algorithms.TokenBucket, 12)
		}
		n := tc.counts[0]
		fl, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Clock: algotest.NewClock(t0)})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /", fl.Handler(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
		admitted := 0
		for i, c := range tc.counts {
			if i > 0 {
				n = c
				if err := fl.Update(); err != nil {
					t.Fatal(err)
				}
			}
			for range 20 {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				if rec.Code == http.StatusOK {
					admitted++
				}
			}
		}
		if admitted != tc.want {
			t.Errorf("%s, instances %v: one client admitted %d times by one instance in one window, want %d (cluster-wide limit 12)", tc.kind, tc.counts, admitted, tc.want)
		}
	}
}
