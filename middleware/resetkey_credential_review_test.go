package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResetKeyOfACredentialHeaderTakesItsDigest pins the README's upgrade
// note: a policy keyed by keyfunc.Header("X-Api-Key") (a credential's
// name) keys the client by the digest of its key, so ResetKey with the key
// as sent forgets nothing (the client stays refused), and ResetKey with
// its digest (keyfunc.Secret of the value) lifts the limit. Through chi.
func TestResetKeyOfACredentialHeaderTakesItsDigest(t *testing.T) {
	store, clock := newStore(t)
	apiKey := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	m := middleware.MustNew(store, []*policy.Policy{fixed("api", 1, time.Hour, apiKey)}, middleware.WithClock(clock))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok)
	get := func() int { return serve(r, "GET", "/", "X-Api-Key", "sk_live_1").Code }
	if a, b := get(), get(); a != http.StatusOK || b != http.StatusTooManyRequests {
		t.Fatalf("got %d %d, want 200 429", a, b)
	}
	ctx := context.Background()
	if err := m.ResetKey(ctx, "api:sk_live_1"); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusTooManyRequests {
		t.Errorf("after ResetKey of the key as sent: %d, want 429 (the store holds its digest)", code)
	}
	digest, err := keyfunc.Secret(func(*http.Request) (string, error) { return "sk_live_1", nil })(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ResetKey(ctx, "api:"+digest); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusOK {
		t.Errorf("after ResetKey of its digest: %d, want 200", code)
	}
}
