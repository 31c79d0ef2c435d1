package adaptive_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFleetShareReloadedTighterKeepsUsage: a reload that lowers a
// cluster-wide limit (100 to 60 a minute, an operator tightening it under
// attack) must not hand a client a fresh quota on an instance whose Fleet
// holds a share of it (SetLimitUnguarded), as it hands none on any policy
// it tightens (see middleware.Middleware.SetPolicies). The share in force
// (50 of 2 instances, 33 of 3) of a window kind is judged on the
// configured Spec's counters, which hold the client's requests; the
// reload carries it over in proportion (30, 19), the Fleet sets the new
// share (30, 20), judged on the new configured Spec's counters, and the
// configured Spec replaced guards it, judged at the share, for two windows,
// as any policy a reload tightens is guarded by the Spec it replaced. A
// client that used its old share must so be refused for the rest of the
// minute, and get the new share in the next one; after the two windows
// the share is checked once again. It was once admitted the new share
// again at once (80 of 2 instances' 50 and 30, 160 from the fleet, in a
// minute of limits of 100 and then 60): the reload's guard, the configured
// Spec replaced, was dropped with the share's own guard, and held none of
// the requests a share admitted anyway. By SetPolicies and ApplyConfig, through a
// ServeMux, on the memory store and an injected clock.
func TestFleetShareReloadedTighterKeepsUsage(t *testing.T) {
	for _, tc := range []struct {
		instances     int
		oldShare, new int64 // of 100 and of 60
	}{{2, 50, 30}, {3, 33, 20}} {
		for _, how := range []string{"SetPolicies", "ApplyConfig"} {
			t.Run(fmt.Sprintf("%d instances/%s", tc.instances, how), func(t *testing.T) {
				clock := algotest.NewClock(t0) // a minute's start
				store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				perIP := func(limit int64) *policy.Policy {
					return policy.Must(policy.New("per-ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}, ip))
				}
				m := middleware.MustNew(store, []*policy.Policy{perIP(100)}, middleware.WithClock(clock))
				f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return tc.instances }, Clock: clock})
				if err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				mux.Handle("GET /", m.Handler(f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
				admitted := func(n int64) int64 {
					a := int64(0)
					for range n {
						w := httptest.NewRecorder()
						mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						if w.Code == http.StatusOK {
							a++
						}
					}
					return a
				}
				clock.Advance(10 * time.Second)
				if got := admitted(tc.oldShare + 1); got != tc.oldShare {
					t.Fatalf("at a share of %d: %d of %d admitted", tc.oldShare, got, tc.oldShare+1)
				}
				switch how {
				case "SetPolicies":
					err = m.SetPolicies([]*policy.Policy{perIP(60)})
				case "ApplyConfig":
					var cfg *policy.Config
					cfg, err = policy.ParseConfig([]byte("policies:\n  - {name: per-ip, algorithm: fixed_window, limit: 60, window: 1m}\n"), "ratekeeper.yaml")
					if err == nil {
						err = m.ApplyConfig(cfg)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Update(); err != nil { // as the package doc advises, right after the reload
					t.Fatal(err)
				}
				if got := m.Set().Policy(0).Spec().Limit; got != tc.new {
					t.Fatalf("after the reload to 60: a share of %d, want %d", got, tc.new)
				}
				if gs := m.Set().Policy(0).Guards(); len(gs) != 2 || gs[0].Limit != 60 || gs[1].Limit != 100 {
					t.Errorf("after the reload: guards %v, want the configured 60 (the share's own check, folded) and the 100 replaced", gs)
				}
				if got := admitted(tc.new + 1); got != 0 {
					t.Errorf("the old share of %d used, reloaded to a share of %d in the same minute: %d more admitted, want 0 (%d in a minute from one instance)",
						tc.oldShare, tc.new, got, tc.oldShare+got)
				}
				clock.Advance(50 * time.Second) // the next minute
				if got := admitted(tc.new + 1); got != tc.new {
					t.Errorf("the next minute at a share of %d: %d of %d admitted", tc.new, got, tc.new+1)
				}
				clock.Advance(70 * time.Second) // two windows after the reload: its guard ends
				admitted(1)
				r := httptest.NewRequest("GET", "/", nil)
				var res policy.Result
				if err := m.Set().Prepare(r, m.Set().Match(r), &res); err != nil {
					t.Fatal(err)
				}
				if gs := m.Set().Policy(0).Guards(); len(gs) != 1 || gs[0].Limit != 60 || !folded(&res, 0) {
					t.Errorf("two windows after the reload: guards %v, folded %v; want the configured 60 alone, folded (a share is checked once)", gs, folded(&res, 0))
				}
			})
		}
	}
}
