package prommetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestShadowedAbandonedNotAStoreError: a request whose client went away
// before the decision is Abandoned and counted in neither counter; shadow
// mode serves it instead (outcome ShadowDenied, the store call failed
// with the request's context), and it must not become a store error: the
// store did not fail (Stats.StoreErrors and the failure state do not move),
// and a dry run would otherwise raise store-error alerts the enforcing
// middleware does not.
func TestShadowedAbandonedNotAStoreError(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		t.Run(fmt.Sprintf("shadow=%v", shadow), func(t *testing.T) {
			_, metrics, mem := metricsAndStore(t)
			store := ctxStore{&switchable{Store: mem}}
			var seen []middleware.Outcome
			opts := []middleware.Option{middleware.WithObserver(metrics, outcomeRecorder{&seen})}
			if shadow {
				opts = append(opts, middleware.WithShadow(nil))
			}
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, remote)}, opts...)
			metrictest.KeepAlive(t, m)
			h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			gone, cancel := context.WithCancel(context.Background())
			cancel()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(gone))
			want := middleware.Abandoned
			if shadow {
				want = middleware.ShadowDenied
			}
			if len(seen) != 1 || seen[0] != want {
				t.Fatalf("outcomes %v, want [%v]", seen, want)
			}
			if n := m.Stats().StoreErrors; n != 0 {
				t.Fatalf("Stats.StoreErrors = %d, want 0", n)
			}
			if got := testutil.ToFloat64(metrics.ErrorCounter("p", "store")); got != 0 {
				t.Errorf("errors{p,store} = %v for a request whose client went away, want 0", got)
			}
		})
	}
}

// outcomeRecorder is an Observer appending each request's outcome.
type outcomeRecorder struct{ seen *[]middleware.Outcome }

func (o outcomeRecorder) ObserveRequest(e middleware.Event)    { *o.seen = append(*o.seen, e.Outcome) }
func (outcomeRecorder) ObserveState(from, to middleware.State) {}
func (outcomeRecorder) ObserveLimit(string, int64, int64)      {}
