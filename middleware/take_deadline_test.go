package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTakeDeadlineRetryAfter: a store call still unanswered when a
// server-side deadline on the request runs out (a deadline middleware
// further out, as chi's Timeout sets) is answered 503, as before, but now
// with Retry-After, as a leaky_queue hold cut by a deadline is: the failure
// mode's wait (FailClosed's), at least 1 s. Before, the 503 carried no
// Retry-After, and a well-behaved client could only guess. A client that
// went away (its context cancelled) reads nothing, and still gets none.
// Through a real chi router, in a synctest bubble (deadlines pass on the
// fake clock).
func TestTakeDeadlineRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name    string
		failure []middleware.Option
		cancel  bool
		want    string
	}{
		{name: "fail open", want: "1"},
		{name: "fail closed 5s", failure: []middleware.Option{middleware.OnStoreError(middleware.FailClosed(5 * time.Second))}, want: "5"},
		{name: "client gone", cancel: true, want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, _ := newStore(t)
				m := middleware.MustNew(&hanging{mem: mem}, []*policy.Policy{fixed("u", 100, time.Minute, user)}, tt.failure...)
				r := chi.NewRouter()
				r.Use(func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
						var ctx context.Context
						var cancel context.CancelFunc
						if tt.cancel {
							ctx, cancel = context.WithCancel(req.Context())
							time.AfterFunc(time.Second, cancel)
						} else {
							ctx, cancel = context.WithTimeout(req.Context(), time.Second)
						}
						defer cancel()
						next.ServeHTTP(w, req.WithContext(ctx))
					})
				})
				r.Use(m.Handler)
				r.Get("/", ok)
				w := serve(r, "GET", "/", "X-User", "hang")
				if w.Code != http.StatusServiceUnavailable {
					t.Fatalf("status %d, want 503", w.Code)
				}
				if got := w.Header().Get("Retry-After"); got != tt.want {
					t.Errorf("Retry-After %q, want %q", got, tt.want)
				}
				if st := m.Stats(); st.Abandoned != 1 {
					t.Errorf("stats %+v, want 1 abandoned", st)
				}
			})
		})
	}
}
