package middleware_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResetEveryPolicyThatApplies: Reset without names forgets the key of
// every policy that applies to the request, the last one included.
func TestResetEveryPolicyThatApplies(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 1, time.Minute, user),
		fixed("b", 1, time.Minute, user),
	})
	if w := serve(m.Handler(ok), "GET", "/", "X-User", "ann"); w.Code != 200 {
		t.Fatalf("first request: %d, want 200", w.Code)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	if err := m.Reset(r); err != nil {
		t.Fatal(err)
	}
	if w := serve(m.Handler(ok), "GET", "/", "X-User", "ann"); w.Code != 200 {
		t.Errorf("after Reset: %d %q, want 200 (both policies' keys forgotten)", w.Code, w.Header().Get("RateLimit"))
	}
}
