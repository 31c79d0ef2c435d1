package adaptive_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestConfigInvalidNamesTheField: New: "every invalid threshold is an
// error naming the field"; NewFleet's errors name FleetConfig's. Not a
// number, infinities where a fraction is wanted, and negative values.
func TestConfigInvalidNamesTheField(t *testing.T) {
	m := newMiddleware(t, 100)
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		cfg   adaptive.Config
		field string
	}{
		{adaptive.Config{Period: -time.Second}, "Config.Period"},
		{adaptive.Config{LatencyFactor: nan}, "Config.LatencyFactor"},
		{adaptive.Config{LatencyFactor: -inf}, "Config.LatencyFactor"},
		{adaptive.Config{LatencyFactor: 0.5}, "Config.LatencyFactor"},
		{adaptive.Config{ErrorRate: nan}, "Config.ErrorRate"},
		{adaptive.Config{ErrorRate: inf}, "Config.ErrorRate"},
		{adaptive.Config{ErrorRate: -0.1}, "Config.ErrorRate"},
		{adaptive.Config{Decrease: nan}, "Config.Decrease"},
		{adaptive.Config{Decrease: inf}, "Config.Decrease"},
		{adaptive.Config{Step: nan}, "Config.Step"},
		{adaptive.Config{Step: -inf}, "Config.Step"},
		{adaptive.Config{Floor: nan}, "Config.Floor"},
		{adaptive.Config{Floor: inf}, "Config.Floor"},
		{adaptive.Config{Floor: -0.5}, "Config.Floor"},
		{adaptive.Config{StablePeriods: -1}, "Config.StablePeriods"},
		{adaptive.Config{MinSamples: -1}, "Config.MinSamples"},
		{adaptive.Config{Baseline: -1}, "Config.Baseline"},
		{adaptive.Config{Policies: []string{"nope"}}, "Config.Policies"},
	} {
		c, err := adaptive.New(m, tc.cfg)
		if c != nil || err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%+v) = %v, %v; want an error naming %s", tc.cfg, c, err, tc.field)
		}
	}
	for _, tc := range []struct {
		cfg   adaptive.FleetConfig
		field string
	}{
		{adaptive.FleetConfig{}, "FleetConfig.Instances"},
		{adaptive.FleetConfig{Instances: func() int { return 2 }, Every: -time.Second}, "FleetConfig.Every"},
		{adaptive.FleetConfig{Instances: func() int { return 2 }, Policies: []string{"nope"}}, "FleetConfig.Policies"},
	} {
		f, err := adaptive.NewFleet(m, tc.cfg)
		if f != nil || err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("NewFleet(%+v) = %v, %v; want an error naming %s", tc.cfg, f, err, tc.field)
		}
	}
}
