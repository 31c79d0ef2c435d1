package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountIfNeedsGiveBackStore: a policy that counts only some responses
// (CountIf) over a store, or a fallback store, that cannot give units back
// would silently count every response; New, SetPolicies and ApplyConfig
// refuse it, naming the policy and what the store lacks, and keep the
// running policies.
func TestCountIfNeedsGiveBackStore(t *testing.T) {
	mem, _ := newStore(t)
	wrapped := takeOnly{mem} // as an instrumenting wrapper might forward Take alone
	login := fixed("login", 5, time.Minute, remote, policy.CountIf(policy.CountFailed))
	plain := fixed("per-ip", 100, time.Minute, remote)
	wantErr := func(err error, what string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), `"login"`) || !strings.Contains(err.Error(), "GiveBacker") {
			t.Errorf("%s: error %v; want one naming the policy \"login\" and algorithms.GiveBacker", what, err)
		}
	}
	_, err := middleware.New(wrapped, []*policy.Policy{plain, login})
	wantErr(err, "New over a Take-only store")
	_, err = middleware.New(mem, []*policy.Policy{login}, middleware.OnStoreError(middleware.FallBack(wrapped)))
	wantErr(err, "New with a Take-only fallback store")

	m, err := middleware.New(wrapped, []*policy.Policy{plain})
	if err != nil {
		t.Fatalf("New without CountIf over a Take-only store: %v", err)
	}
	wantErr(m.SetPolicies([]*policy.Policy{plain, login}), "SetPolicies")
	cfg := mustConfig(t, "policies:\n  - name: login\n    limit: 5\n    window: 1m\n    count: failed\n")
	wantErr(m.ApplyConfig(cfg), "ApplyConfig")
	if ps := m.Set().Policies(); len(ps) != 1 || ps[0].Name() != "per-ip" {
		t.Errorf("after the refusals the middleware enforces %v, want per-ip alone", ps)
	}
	if w := serve(m.Handler(ok), http.MethodGet, "/"); w.Code != http.StatusOK {
		t.Errorf("GET /: %d", w.Code)
	}
	// Over the memory store itself, and with it as the fallback, it is fine.
	if _, err := middleware.New(mem, []*policy.Policy{login}, middleware.OnStoreError(middleware.FallBack(mem))); err != nil {
		t.Errorf("New with CountIf over the memory store: %v", err)
	}
}
