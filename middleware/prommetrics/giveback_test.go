package prommetrics_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
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
	metrictest.KeepAlive(t, m)
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

// brokenGiveBack is a memory store whose GiveBack fails.
type brokenGiveBack struct{ *algorithms.MemoryStore }

func (brokenGiveBack) GiveBack(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return errors.New("prommetrics_test: give-back failed")
}

// TestFailedGiveBackNotAnError: errors_total's "store" kind counts the
// requests whose store call failed, as the observer is told them; a
// give-back that fails after the handler has returned is told to the
// error handler and counted in Stats().StoreErrors only, as the package
// documentation says: the admitted request stays counted as allowed.
func TestFailedGiveBackNotAnError(t *testing.T) {
	_, metrics, mem := metricsAndStore(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(brokenGiveBack{mem}, []*policy.Policy{login}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	r := chi.NewRouter()
	r.With(m.Handler).Get("/", func(http.ResponseWriter, *http.Request) {})
	if got := serve(r); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	if got := m.Stats().StoreErrors; got != 1 {
		t.Errorf("Stats().StoreErrors = %d, want 1 (the give-back)", got)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("login", "store")); got != 0 {
		t.Errorf(`errors_total{policy="login",kind="store"} = %v, want 0`, got)
	}
}
