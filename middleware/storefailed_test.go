package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// failedObserver records, per request, the outcome and Result.StoreFailed
// as the observer sees them.
type failedObserver struct {
	nopObserver
	got []string
}

func (o *failedObserver) ObserveRequest(e middleware.Event) {
	s := e.Outcome.String()
	if e.Result.StoreFailed() {
		s += "+store_failed"
	}
	if e.Result.Fallback() {
		s += "+fallback"
	}
	o.got = append(o.got, s)
}

// TestResultStoreFailed: Result.StoreFailed is set exactly when the
// middleware counts the request's store call in Stats.StoreErrors: the
// store failing (failing open), the breaker refusing the call, the store
// failing under a fallback store that then decides; not a healthy call,
// nor one the client's own cancellation cut short (Abandoned, no store
// error). Through chi.
func TestResultStoreFailed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		failure middleware.Failure
		want    []string
	}{
		{"fail open", middleware.FailOpen(), []string{"allowed", "abandoned", "failed_open+store_failed", "failed_open+store_failed"}},
		{"fall back", middleware.FallBack(nil), []string{"allowed", "abandoned", "allowed+store_failed+fallback", "allowed+store_failed+fallback"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := newStore(t)
			store := &switchStore{Store: mem}
			failure := tc.failure
			if tc.name == "fall back" {
				fb, _ := newStore(t)
				failure = middleware.FallBack(fb)
			}
			obs := &failedObserver{}
			m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 100, time.Minute, remote)},
				middleware.OnStoreError(failure), middleware.WithBreaker(1, time.Hour),
				middleware.WithObserver(obs), middleware.WithErrorHandler(func(*http.Request, error) {}))
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", func(http.ResponseWriter, *http.Request) {})
			do := func(ctx context.Context) {
				r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			}
			do(context.Background()) // healthy
			gone, cancel := context.WithCancel(context.Background())
			cancel()
			do(gone) // the client went away: no store error
			store.fail.Store(true)
			do(context.Background()) // the store fails: the breaker opens
			do(context.Background()) // the breaker refuses the call
			if len(obs.got) != len(tc.want) {
				t.Fatalf("observed %q, want %q", obs.got, tc.want)
			}
			for i := range tc.want {
				if obs.got[i] != tc.want[i] {
					t.Errorf("request %d: %q, want %q", i+1, obs.got[i], tc.want[i])
				}
			}
			if s := m.Stats(); s.StoreErrors != 2 {
				t.Errorf("Stats().StoreErrors = %d, want 2 (as many as StoreFailed requests)", s.StoreErrors)
			}
		})
	}
}
