package middleware_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTakeDeadlineRetryAfterShadow: in shadow mode the middleware never
// refuses for its failure mode (a store failure under FailClosed is let
// through, counted as shadow-denied), so a request whose server-side
// deadline runs out while the store decides it, answered 503 because its
// context is over, is told to come back in 1 s, not after FailClosed's
// wait, which shadow mode never imposes. Before, it read FailClosed's 30 s,
// in the response and in the reject hook's Rejection.RetryAfter. Out of
// shadow mode FailClosed's wait still applies. The request is abandoned,
// not shadow-denied, in both. Through a real chi router, in a synctest
// bubble (deadlines pass on the fake clock).
func TestTakeDeadlineRetryAfterShadow(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shadow bool
		hook   bool
		want   time.Duration
	}{
		{name: "shadow", shadow: true, want: time.Second},
		{name: "shadow, reject hook", shadow: true, hook: true, want: time.Second},
		{name: "enforced", want: 30 * time.Second},
		{name: "enforced, reject hook", hook: true, want: 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, _ := newStore(t)
				opts := []middleware.Option{middleware.OnStoreError(middleware.FailClosed(30 * time.Second))}
				shadowReports := 0
				if tt.shadow {
					opts = append(opts, middleware.WithShadow(func(*http.Request, *middleware.Result) { shadowReports++ }))
				}
				var rej *middleware.Rejection
				if tt.hook {
					opts = append(opts, middleware.WithRejectHandler(func(w http.ResponseWriter, _ *http.Request, j middleware.Rejection) {
						rej = &j
						w.WriteHeader(j.Status)
					}))
				}
				m := middleware.MustNew(&hanging{mem: mem}, []*policy.Policy{fixed("u", 100, time.Minute, user)}, opts...)
				r := chi.NewRouter()
				r.Use(func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
						ctx, cancel := context.WithTimeout(req.Context(), time.Second)
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
				if tt.hook {
					if rej == nil {
						t.Fatal("reject hook not called")
					}
					if rej.RetryAfter != tt.want {
						t.Errorf("Rejection.RetryAfter %v, want %v", rej.RetryAfter, tt.want)
					}
				} else if got, want := w.Header().Get("Retry-After"), strconv.FormatInt(int64(tt.want/time.Second), 10); got != want {
					t.Errorf("Retry-After %q, want %q", got, want)
				}
				if st := m.Stats(); st.Abandoned != 1 || st.ShadowDenied != 0 || st.FailedClosed != 0 {
					t.Errorf("stats %+v, want 1 abandoned, none shadow-denied or failed closed", st)
				}
				if shadowReports != 0 {
					t.Errorf("%d shadow reports, want 0", shadowReports)
				}
			})
		})
	}
}
