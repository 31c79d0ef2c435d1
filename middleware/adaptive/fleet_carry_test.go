package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// fleetRig is a middleware of one policy, per-ip (fixed window, a
// minute), whose limit a Fleet of n instances shares, in front of a
// route of chi or a ServeMux, on an injected clock at 10 s into a minute.
type fleetRig struct {
	t     *testing.T
	clock *algotest.Clock
	m     *middleware.Middleware
	f     *adaptive.Fleet
	n     int
	h     http.Handler
}

func newFleetRig(t *testing.T, mux string, limit int64, n int) *fleetRig {
	t.Helper()
	rig := &fleetRig{t: t, clock: algotest.NewClock(t0), n: n}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(rig.clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rig.m = middleware.MustNew(store, []*policy.Policy{perIPMinute(limit)}, middleware.WithClock(rig.clock))
	rig.f, err = adaptive.NewFleet(rig.m, adaptive.FleetConfig{Instances: func() int { return rig.n }, Clock: rig.clock})
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(rig.m.Handler, rig.f.Handler)
		r.Get("/", ok)
		rig.h = r
	} else {
		sm := http.NewServeMux()
		sm.Handle("GET /", rig.m.Handler(rig.f.Handler(ok)))
		rig.h = sm
	}
	rig.clock.Advance(10 * time.Second)
	return rig
}

func perIPMinute(limit int64) *policy.Policy {
	return policy.Must(policy.New("per-ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}, ip))
}

// admitted returns how many of n requests the rig admits.
func (rig *fleetRig) admitted(n int64) int64 {
	a := int64(0)
	for range n {
		w := httptest.NewRecorder()
		rig.h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code == http.StatusOK {
			a++
		}
	}
	return a
}

// reload sets the configured limit and updates the Fleet, as the package
// doc advises.
func (rig *fleetRig) reload(limit int64) {
	rig.t.Helper()
	if err := rig.m.SetPolicies([]*policy.Policy{perIPMinute(limit)}); err != nil {
		rig.t.Fatal(err)
	}
	if err := rig.f.Update(); err != nil {
		rig.t.Fatal(err)
	}
}

// expect checks that of n requests want are admitted, and that the
// policy then runs at share, guarded by the limits guards (the first
// request after a guard's end ends it).
func (rig *fleetRig) expect(what string, n, want, share int64, guards ...int64) {
	rig.t.Helper()
	if got := rig.admitted(n); got != want {
		rig.t.Errorf("%s: %d of %d admitted, want %d", what, got, n, want)
	}
	p := rig.m.Set().Policy(0)
	var gs []int64
	for _, g := range p.Guards() {
		gs = append(gs, g.Limit)
	}
	if p.Spec().Limit != share || len(gs) != len(guards) {
		rig.t.Errorf("%s: at %d guarded by %v, want %d guarded by %v", what, p.Spec().Limit, gs, share, guards)
	} else {
		for i := range gs {
			if gs[i] != guards[i] {
				rig.t.Errorf("%s: at %d guarded by %v, want %d guarded by %v", what, p.Spec().Limit, gs, share, guards)
				break
			}
		}
	}
}

// TestFleetShareCarry: a Fleet's share of a window kind (fixed_window
// here) is judged on the configured Spec's counters, its guard folded into
// one check (as SetLimit's; SetLimitUnguarded is the same for a window
// kind). A reload that lowers the cluster-wide limit guards the new share
// with the configured Spec it replaced for two windows
// (TestFleetShareReloadedTighterKeepsUsage); within them, nothing that
// moves the limit hands a client who used its old share a fresh one in the
// same minute: a reload back up, a second reload down, a change of the
// instance count, SetLimit and SetLimitUnguarded at the share. The carry's
// end, at the first request after it, rebuilds the rules without it and
// keeps the share's counters (the new configured Spec's, which counted
// every request since the reload): a client that used 20 of a share of 30
// gets 10 more. Through chi and a ServeMux.
func TestFleetShareCarry(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run("raised back/"+mux, func(t *testing.T) {
			rig := newFleetRig(t, mux, 100, 2)
			rig.expect("at 100", 51, 50, 50, 100)
			rig.reload(60)
			rig.expect("reloaded to 60", 31, 0, 30, 60, 100)
			rig.reload(100)
			rig.expect("reloaded back to 100", 51, 0, 50, 100)
			rig.clock.Advance(time.Minute)
			rig.expect("the next minute", 51, 50, 50, 100)
		})
		t.Run("reloaded twice/"+mux, func(t *testing.T) {
			rig := newFleetRig(t, mux, 100, 2)
			rig.expect("at 100", 51, 50, 50, 100)
			rig.reload(60)
			rig.expect("reloaded to 60", 31, 0, 30, 60, 100)
			rig.clock.Advance(30 * time.Second) // 40 s into the minute
			rig.reload(40)
			rig.expect("reloaded to 40", 21, 0, 20, 40, 100)
			// The next minute: 20, the carry's 100 holds them too.
			rig.clock.Advance(20 * time.Second)
			rig.expect("the next minute", 21, 20, 20, 40, 100)
			// Two windows after the second reload (from the 100,
			// which holds the requests of both): the carry ends.
			rig.clock.Advance(100 * time.Second)
			rig.expect("two windows after the second reload", 21, 20, 20, 40)
		})
		t.Run("instance count changes/"+mux, func(t *testing.T) {
			rig := newFleetRig(t, mux, 120, 2)
			rig.expect("at 120", 61, 60, 60, 120)
			rig.reload(60)
			rig.expect("reloaded to 60", 31, 0, 30, 60, 120)
			for _, n := range []int{3, 4} {
				rig.n = n
				if err := rig.f.Update(); err != nil {
					t.Fatal(err)
				}
				rig.expect("at "+string(rune('0'+n))+" instances", 31, 0, int64(60/n), 60, 120)
			}
			rig.clock.Advance(50 * time.Second)
			rig.expect("the next minute at 4 instances", 16, 15, 15, 60, 120)
		})
		t.Run("SetLimit and back/"+mux, func(t *testing.T) {
			rig := newFleetRig(t, mux, 100, 2)
			rig.expect("at 100", 51, 50, 50, 100)
			rig.reload(60)
			if err := rig.m.SetLimit("per-ip", 30); err != nil {
				t.Fatal(err)
			}
			rig.expect("guarded by SetLimit", 31, 0, 30, 60, 100)
			if err := rig.m.SetLimitUnguarded("per-ip", 30); err != nil {
				t.Fatal(err)
			}
			rig.expect("SetLimitUnguarded, the same", 31, 0, 30, 60, 100)
		})
		t.Run("carry's end/"+mux, func(t *testing.T) {
			rig := newFleetRig(t, mux, 100, 2)
			rig.expect("at 100", 51, 50, 50, 100)
			rig.reload(60)                       // at 10 s: the guard ends 120 s on
			rig.clock.Advance(115 * time.Second) // 5 s into the third minute
			rig.expect("before the guard's end", 20, 20, 30, 60, 100)
			rig.clock.Advance(10 * time.Second)
			rig.expect("after the guard's end", 11, 10, 30, 60)
		})
	}
}
