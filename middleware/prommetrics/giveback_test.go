package prommetrics_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestGivenBackCounted: the requests whose units went back to the store
// because their response did not count (policy.CountIf) are counted per
// policy in ratekeeper_given_back_total, as Stats().GivenBack counts them:
// a login policy counting only failures gives back every success, the
// per-IP policy beside it none.
func TestGivenBackCounted(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(mem, []*policy.Policy{fixed("per-ip", 100, remote), login}, middleware.WithObserver(metrics))
	status := http.StatusOK
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	for range 3 {
		serve(h)
	}
	status = http.StatusUnauthorized
	for range 2 {
		serve(h)
	}
	if got := m.Stats().GivenBack; got != 3 {
		t.Fatalf("Stats().GivenBack = %d, want 3", got)
	}
	want := `
# HELP ratekeeper_given_back_total Admitted requests whose units went back to the store, per policy, their responses not counting under it (policy.CountIf).
# TYPE ratekeeper_given_back_total counter
ratekeeper_given_back_total{policy="login"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_given_back_total"); err != nil {
		t.Error(err)
	}
}
