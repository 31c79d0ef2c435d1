package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNoErrorTextReachesTheClient: every refusal the middleware answers
// itself, through chi, tells its error handler why, and the client none
// of it: no reported error's text, nor the store's, is in the body or
// in any header. The refusals: a store failure under
// FailClosed (503), the breaker open (503), a policy without a key (400,
// 403), a cost out of range (429), a leaky_queue hold the request's
// deadline would cut short (503).
func TestNoErrorTextReachesTheClient(t *testing.T) {
	userOnly := func(action policy.KeyAction) *policy.Policy {
		return fixed("per-user", 5, time.Minute, user, policy.OnKeyError(action))
	}
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}, remote))
	for _, tc := range []struct {
		name     string
		store    func(t *testing.T) algorithms.Store
		policies []*policy.Policy
		opts     []middleware.Option
		requests int // the last one is checked
		deadline time.Duration
		status   int
	}{
		{"fail closed", func(*testing.T) algorithms.Store { return &failing{} }, []*policy.Policy{fixed("p", 5, time.Minute, remote)},
			[]middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(0, 0)}, 1, 0, 503},
		{"breaker open", func(*testing.T) algorithms.Store { return &failing{} }, []*policy.Policy{fixed("p", 5, time.Minute, remote)},
			[]middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(1, time.Hour)}, 2, 0, 503},
		{"no key, 400", memStore, []*policy.Policy{userOnly(policy.RejectBadRequest)}, nil, 1, 0, 400},
		{"no key, 403", memStore, []*policy.Policy{userOnly(policy.RejectForbidden)}, nil, 1, 0, 403},
		{"cost out of range", memStore, []*policy.Policy{fixed("p", 5, time.Minute, remote, policy.WithCost(func(*http.Request) int64 { return 6 }))}, nil, 1, 0, 429},
		{"deadline before the queue's turn", memStore, []*policy.Policy{queue}, nil, 3, time.Second, 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var reported []error
			onError := middleware.WithErrorHandler(func(_ *http.Request, err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			})
			m := middleware.MustNew(tc.store(t), tc.policies, append(tc.opts, onError, middleware.WithWait(func(context.Context, time.Duration) error { return nil }))...)
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", ok)
			var w *httptest.ResponseRecorder
			for range tc.requests {
				req := httptest.NewRequest("GET", "/", nil)
				if tc.deadline > 0 {
					ctx, cancel := context.WithTimeout(req.Context(), tc.deadline)
					defer cancel()
					req = req.WithContext(ctx)
				}
				w = httptest.NewRecorder()
				r.ServeHTTP(w, req)
			}
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reported) == 0 {
				t.Fatal("the error handler was told nothing")
			}
			texts := []string{errDown.Error(), "10.0.0.7"}
			for _, err := range reported {
				texts = append(texts, err.Error())
			}
			for _, text := range texts {
				if strings.Contains(w.Body.String(), text) {
					t.Errorf("the body %q holds the error text %q", w.Body, text)
				}
				for k, vs := range w.Header() {
					for _, v := range vs {
						if strings.Contains(v, text) {
							t.Errorf("header %s: %q holds the error text %q", k, v, text)
						}
					}
				}
			}
		})
	}
}

// memStore returns an in-memory store on the tests' clock.
func memStore(t *testing.T) algorithms.Store {
	store, _ := newStore(t)
	return store
}
