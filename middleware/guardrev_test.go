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
