package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResetKeyLiftsAGuardedLimit: an operator lifting a client's limit
// with ResetKey while the policy runs at a lowered limit (SetLimit, as the
// adaptive controllers do) must lift it: the lowered policy is guarded by
// the configured Spec (policy.Policy.Guard), whose counters refuse the
// client as well, so ResetKey must forget the key under the guard too, as
// Reset does.
func TestResetKeyLiftsAGuardedLimit(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-user", 3, time.Minute, user)})
	mux := http.NewServeMux()
	mux.Handle("GET /", ok)
	h := m.Handler(mux)
	for i := range 3 {
		if w := serve(h, "GET", "/", "X-User", "bob"); w.Code != 200 {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	if err := m.SetLimit("per-user", 2); err != nil {
		t.Fatal(err)
	}
	if w := serve(h, "GET", "/", "X-User", "bob"); w.Code != 429 {
		t.Fatalf("bob at limit 2 after 3 of 3: %d, want 429", w.Code)
	}
	if err := m.ResetKey(context.Background(), "per-user:bob"); err != nil {
		t.Fatal(err)
	}
	if w := serve(h, "GET", "/", "X-User", "bob"); w.Code != 200 {
		t.Errorf("bob after ResetKey at limit 2: %d (RateLimit %q), want 200", w.Code, w.Header().Get("RateLimit"))
	}
}

// TestNestedSharedPolicyLoweredInOne: one policy given to two nested
// middlewares (10 per minute), one of which runs it at a lowered limit
// of 8 (SetLimit). The lowered copy is no longer the same *policy.Policy,
// so the middleware further in decides it again; before guards that was
// another Spec, counted apart, and the client got 8 a minute. The lowered
// copy's guard, though, is the very state the other middleware counts
// (the configured Spec, the same key): each request was counted twice
// there, and the client got 5. Each state a request reaches must be
// counted once: 8, whichever middleware runs the lowered limit.
func TestNestedSharedPolicyLoweredInOne(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lowerInner bool
	}{{"inner lowered", true}, {"outer lowered", false}} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			p := fixed("per-user", 10, time.Minute, user)
			outer := middleware.MustNew(store, []*policy.Policy{p})
			inner := middleware.MustNew(store, []*policy.Policy{p})
			low := outer
			if tc.lowerInner {
				low = inner
			}
			if err := low.SetLimit("per-user", 8); err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("GET /", inner.Handler(ok))
			h := outer.Handler(mux)
			admitted := 0
			for range 12 {
				if w := serve(h, "GET", "/", "X-User", "bob"); w.Code == 200 {
					admitted++
				}
			}
			if admitted != 8 {
				t.Errorf("admitted %d of 12 at limits of 10 and 8, want 8", admitted)
			}
		})
	}
}
