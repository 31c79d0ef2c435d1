package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestNewRefusalsAndStartState: New refuses a nil Option and an empty
// namespace with exact messages; a new Metrics is healthy, every other
// failure state 0.
func TestNewRefusalsAndStartState(t *testing.T) {
	for _, tc := range []struct {
		opt  prommetrics.Option
		want string
	}{
		{nil, "prommetrics: Options hold a nil Option at index 0"},
		{prommetrics.WithNamespace(""), "prommetrics: WithNamespace: namespace is empty"},
	} {
		if m, err := prommetrics.New(nil, tc.opt); m != nil || err == nil || err.Error() != tc.want {
			t.Errorf("New = %v, %v; want nil, %q", m, err, tc.want)
		}
	}
	m, err := prommetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range middleware.States {
		want := 0.0
		if s == middleware.StateHealthy {
			want = 1
		}
		if got := testutil.ToFloat64(m.StateGauge(s.String())); got != want {
			t.Errorf("failure_state{%s} = %v at start, want %v", s, got, want)
		}
	}
}
