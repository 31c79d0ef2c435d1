package adaptive_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// noPanic calls f and reports a panic as a test error: a constructor
// given bad input returns an error, it does not panic.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", what, p)
		}
	}()
	f()
}

// TestTypedNilClockRefused: a *algotest.Clock (or any pointer clock)
// variable never assigned, passed as Config.Clock or FleetConfig.Clock, is
// not an interface nil, so "== nil" let it through and New and NewFleet
// panicked reading it. Each is refused with an error naming the field, as
// middleware.WithClock refuses one.
func TestTypedNilClockRefused(t *testing.T) {
	m := newMiddleware(t, 100)
	var clock *algotest.Clock
	noPanic(t, "New with a nil *algotest.Clock", func() {
		c, err := adaptive.New(m, adaptive.Config{Clock: clock})
		if want := "adaptive: Config.Clock is nil"; c != nil || err == nil || err.Error() != want {
			t.Errorf("New(Config{Clock: nil *Clock}) = %v, %v; want nil, %q", c, err, want)
		}
	})
	noPanic(t, "NewFleet with a nil *algotest.Clock", func() {
		f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Instances: func() int { return 2 }})
		if want := "adaptive: FleetConfig.Clock is nil"; f != nil || err == nil || err.Error() != want {
			t.Errorf("NewFleet(FleetConfig{Clock: nil *Clock}) = %v, %v; want nil, %q", f, err, want)
		}
	})
	if got := limitsOf(m); got != "100" {
		t.Errorf("limits after the refused constructors: %s, want 100 (untouched)", got)
	}
}
