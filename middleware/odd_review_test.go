package middleware_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFailClosedLongestRetryAfter: FailClosed takes any non-negative
// Duration. The longest, 2^63-1 ns, is 9223372037 whole seconds rounded
// up: the 503's Retry-After says so, and the reject handler's
// Rejection.RetryAfter, the same wait as a Duration, is the longest
// Duration (the whole seconds do not fit one) rather than a product that
// overflowed to a negative wait.
func TestFailClosedLongestRetryAfter(t *testing.T) {
	pol := []*policy.Policy{fixed("p", 10, time.Minute, remote)}
	closed := middleware.OnStoreError(middleware.FailClosed(math.MaxInt64))

	r := chi.NewRouter()
	r.Use(middleware.MustNew(&failing{}, pol, closed).Handler)
	r.Get("/", ok)
	w := serve(r, "GET", "/")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "9223372037" {
		t.Errorf("default 503: %d, Retry-After %q; want 503, 9223372037", w.Code, w.Header().Get("Retry-After"))
	}

	var got time.Duration
	reject := middleware.WithRejectHandler(func(w http.ResponseWriter, _ *http.Request, rej middleware.Rejection) {
		got = rej.RetryAfter
		w.WriteHeader(rej.Status)
	})
	r = chi.NewRouter()
	r.Use(middleware.MustNew(&failing{}, pol, closed, reject).Handler)
	r.Get("/", ok)
	if w := serve(r, "GET", "/"); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("reject handler's status %d", w.Code)
	}
	if got != math.MaxInt64 {
		t.Errorf("Rejection.RetryAfter = %d, want %d (the longest Duration)", got, time.Duration(math.MaxInt64))
	}
}
