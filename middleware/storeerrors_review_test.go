package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFailedGiveBackAndRefundCounted: "every failure is counted
// (Middleware.Stats) and passed to WithErrorHandler", and StoreErrors
// counts failed store calls: a give-back the store fails (a response a
// CountIf policy does not count) and a refund it fails (a leaky_queue
// place of a request its deadline refused) are store calls that failed,
// told to the error handler and counted in StoreErrors, through chi.
// Before, the error handler heard of them and StoreErrors stayed 0.
func TestFailedGiveBackAndRefundCounted(t *testing.T) {
	t.Run("give-back", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}
		m := middleware.MustNew(brokenGiveBack{store}, []*policy.Policy{
			policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
		}, got.handler())
		r := chi.NewRouter()
		r.With(m.Handler).Post("/login", ok)
		if w := serve(r, "POST", "/login", "X-User", "ann"); w.Code != http.StatusOK {
			t.Fatalf("login: %d, want 200", w.Code)
		}
		if errs := got.of(errGiveBack); len(errs) != 1 {
			t.Errorf("reports %v, want the give-back's error once", got.errs)
		}
		if s := m.Stats(); s.StoreErrors != 1 || s.GivenBack != 0 {
			t.Errorf("Stats: StoreErrors %d, GivenBack %d; want 1, 0", s.StoreErrors, s.GivenBack)
		}
	})
	t.Run("refund", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m := middleware.MustNew(failingRefunds{store}, []*policy.Policy{queue10s()}, got.handler())
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", ok)
		serve(r, "GET", "/") // departs at once; the next waits 10 s
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(beforeTurn(time.Second)))
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("a turn after the deadline: %d, want 503", w.Code)
		}
		if len(got.errs) != 2 { // the deadline, the refund
			t.Errorf("reports %v, want the deadline's and the refund's", got.errs)
		}
		if s := m.Stats(); s.StoreErrors != 1 || s.Abandoned != 1 {
			t.Errorf("Stats: StoreErrors %d, Abandoned %d; want 1, 1", s.StoreErrors, s.Abandoned)
		}
	})
}
