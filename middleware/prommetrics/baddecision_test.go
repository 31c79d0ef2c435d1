package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// delayingStore answers every check with a Delay of an hour: a decision a
// fixed_window policy cannot give (a broken or hostile store), which the
// middleware refuses as a failure of the store. It forwards Take alone, so
// that the memory store's single-check path does not bypass it.
type delayingStore struct{ mem *algorithms.MemoryStore }

func (s delayingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.mem.Take(ctx, checks...)
	for i := range ds {
		ds[i].Delay = time.Hour
	}
	return ds, err
}

// TestInvalidDecisionIsAStoreError: a store whose answer its policy cannot
// give (a Delay on a fixed_window) is a failed store call for the
// middleware: it counts one in Stats().StoreErrors and answers under its
// failure mode (failing open: 200; closed: 503; closed in shadow mode:
// served). errors_total{kind="store"} counts it under the policy, as it
// counts any request whose store call failed, and requests_total nothing
// (no decision was used).
func TestInvalidDecisionIsAStoreError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []middleware.Option
		status int
	}{
		{"fail open", []middleware.Option{middleware.OnStoreError(middleware.FailOpen())}, http.StatusOK},
		{"fail closed", []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, http.StatusServiceUnavailable},
		{"fail closed, shadowed", []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithShadow(nil)}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, metrics, mem := metricsAndStore(t)
			opts := append([]middleware.Option{middleware.WithObserver(metrics), middleware.WithErrorHandler(func(*http.Request, error) {})}, tc.opts...)
			m := middleware.MustNew(delayingStore{mem}, []*policy.Policy{fixed("per-ip", 10, remote)}, opts...)
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", func(http.ResponseWriter, *http.Request) {})
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if got := m.Stats().StoreErrors; got != 1 {
				t.Fatalf("Stats().StoreErrors = %d, want 1", got)
			}
			if got := testutil.ToFloat64(metrics.ErrorCounter("per-ip", "store")); got != 1 {
				t.Errorf(`errors_total{policy="per-ip",kind="store"} = %v, want 1`, got)
			}
			for _, outcome := range []string{"allowed", "denied", "shadow_denied"} {
				if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", "per-ip", "outcome", outcome); got != 0 {
					t.Errorf(`requests_total{policy="per-ip",outcome=%q} = %v, want 0`, outcome, got)
				}
			}
		})
	}
}

// counterValue returns the value of the counter series of family name in
// reg whose labels include the name-value pairs of labels; the test fails
// when there is none.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}
