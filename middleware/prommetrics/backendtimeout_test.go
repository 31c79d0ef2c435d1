package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// runOutContext is a request context whose deadline is an hour away when
// the store call begins (the backend has every chance to answer), and that
// reports the deadline passed once run out: a server-side timeout that a
// hung backend used up.
type runOutContext struct {
	context.Context
	deadline time.Time
	done     chan struct{}
	over     atomic.Bool
}

func (c *runOutContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *runOutContext) Done() <-chan struct{}       { return c.done }
func (c *runOutContext) Err() error {
	if c.over.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *runOutContext) runOut() {
	if c.over.CompareAndSwap(false, true) {
		close(c.done)
	}
}

// hangingStore is a backend that never answers: its Take returns when the
// request's deadline has run out, as a Redis store's call does.
type hangingStore struct{ ctx *runOutContext }

func (s hangingStore) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	s.ctx.runOut()
	return nil, context.DeadlineExceeded
}

// TestBackendTimeoutIsAStoreError: a store call that ends with the
// request's deadline, a deadline that gave the backend every chance to
// answer (an hour away when the call began), is a failure of the backend
// for the middleware: Stats().StoreErrors counts it (and its breaker), and
// the request, its context over, is answered as abandoned (a 503). The
// metrics count both: requests_total{outcome="abandoned"} and
// errors_total{kind="store"}, so that a hung backend shows on the store's
// error series, not only as clients gone. Before, errors_total stayed at 0
// while the failure-state gauge said open. Through chi, failing open and
// closed; in shadow mode the request is served (ShadowDenied), counted as
// a store error and no outcome.
func TestBackendTimeoutIsAStoreError(t *testing.T) {
	for _, mode := range []struct {
		name   string
		opt    middleware.Option
		shadow bool
	}{
		{"fail open", middleware.OnStoreError(middleware.FailOpen()), false},
		{"fail closed", middleware.OnStoreError(middleware.FailClosed(time.Second)), false},
		{"fail closed, shadowed", middleware.OnStoreError(middleware.FailClosed(time.Second)), true},
	} {
		t.Run(mode.name, func(t *testing.T) {
			reg, metrics, _ := metricsAndStore(t)
			ctx := &runOutContext{Context: context.Background(), deadline: time.Now().Add(time.Hour), done: make(chan struct{})}
			opts := []middleware.Option{mode.opt, middleware.WithObserver(metrics), middleware.WithErrorHandler(func(*http.Request, error) {})}
			want, abandoned, outcome := http.StatusServiceUnavailable, int64(1), "abandoned"
			if mode.shadow {
				opts = append(opts, middleware.WithShadow(nil))
				want, abandoned, outcome = http.StatusNoContent, 0, ""
			}
			m := middleware.MustNew(hangingStore{ctx}, []*policy.Policy{fixed("per-ip", 10, remote), fixed("per-ip-2", 20, remote)}, opts...)
			metrictest.KeepAlive(t, m)
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", func(w http.ResponseWriter, _ *http.Request) {
				if !mode.shadow {
					t.Error("served a request whose deadline ran out")
				}
				w.WriteHeader(http.StatusNoContent)
			})
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			if w.Code != want {
				t.Fatalf("status %d, want %d", w.Code, want)
			}
			if s := m.Stats(); s.StoreErrors != 1 || s.Abandoned != abandoned {
				t.Fatalf("Stats() StoreErrors %d, Abandoned %d; want 1 and %d", s.StoreErrors, s.Abandoned, abandoned)
			}
			for _, name := range []string{"per-ip", "per-ip-2"} {
				if got := testutil.ToFloat64(metrics.ErrorCounter(name, "store")); got != 1 {
					t.Errorf(`errors_total{policy=%q,kind="store"} = %v, want 1`, name, got)
				}
				for _, o := range []string{"allowed", "denied", "shadow_denied", "abandoned"} {
					wantN := 0.0
					if o == outcome {
						wantN = 1
					}
					if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", name, "outcome", o); got != wantN {
						t.Errorf(`requests_total{policy=%q,outcome=%q} = %v, want %v`, name, o, got, wantN)
					}
				}
			}
		})
	}
}
