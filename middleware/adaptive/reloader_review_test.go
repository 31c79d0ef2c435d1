package adaptive_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestReloaderDrivesControllerAndFleet: the function Controller.Apply's
// documentation gives to the reloader (ApplyConfig, then ctrl.Apply and
// fleet.Update), run by a reload.Watcher of a real file, leaves no gap:
// once Reload returns, a policy the reload changes is at the level of its
// new limit (160 of 200 at 0.8), and one it removes is left alone,
// without an error; brought back (a new policy for the middleware, which
// would enter at its configured limit), it is at the Controller's level
// (40 of 50) and the Fleet's share (25 of 100 for 4) at once. A version
// refused (two policies of one name) changes nothing.
func TestReloaderDrivesControllerAndFleet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rk.yaml")
	save := func(yaml string) {
		t.Helper()
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte("policies:\n"+yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	const (
		api     = "  - {name: api, limit: 100, window: 1m}\n"
		api200  = "  - {name: api, limit: 200, window: 1m}\n"
		other   = "  - {name: other, limit: 50, window: 1m}\n"
		cluster = "  - {name: cluster, limit: 100, window: 1m}\n"
	)
	save(api + other + cluster)
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	m, err := middleware.FromConfig(store, cfg, middleware.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1, Policies: []string{"api", "other"}})
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Hour, Policies: []string{"cluster"},
		Instances: func() int { return 4 }})
	if err != nil {
		t.Fatal(err)
	}
	w, err := reload.New(path, func(cfg *policy.Config) error {
		err := m.ApplyConfig(cfg)
		if err != nil && !errors.Is(err, middleware.ErrRestartNeeded) {
			return err
		}
		if aerr := ctrl.Apply(); aerr != nil {
			return aerr
		}
		if ferr := fleet.Update(); ferr != nil {
			return ferr
		}
		return err
	}, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	period(t, ctrl, clock, 20, 20, 10*time.Millisecond)
	if got := limitsOf(m); got != "80,40,25" {
		t.Fatalf("level 0.8, 4 instances: limits %s, want 80,40,25", got)
	}
	for _, step := range []struct {
		name, yaml, want string
	}{
		{"api raised, other removed", api200 + cluster, "160,25"},
		{"other back", api200 + other + cluster, "160,40,25"},
		{"api and cluster removed", other, "40"},
		{"both back", api + other + cluster, "80,40,25"},
		{"refused: two policies named api", api + "  - {name: api, limit: 5, window: 1m}\n", "80,40,25"},
	} {
		save(step.yaml)
		err := w.Reload()
		if (err != nil) != (step.name == "refused: two policies named api") {
			t.Errorf("%s: Reload = %v", step.name, err)
		}
		if got := limitsOf(m); got != step.want {
			t.Errorf("%s: limits %s right after Reload, want %s", step.name, got, step.want)
		}
	}
}
