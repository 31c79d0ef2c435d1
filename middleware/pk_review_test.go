package middleware_test

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestPartitionKeyConstruction: WithPartitionKey's pk is what its
// documentation says, so that an operator holding the secret can compute a
// client's pk from its key: the first 9 bytes of SHA-256 over the secret
// followed by the key as the store sees it (the policy's name, a colon,
// the client's key), in standard base64 between colons, on the IETF
// RateLimit member only.
func TestPartitionKeyConstruction(t *testing.T) {
	secret := []byte("0123456789abcdef-secret")
	store, clock := newStore(t)
	m := middleware.MustNew(store, docPolicies(), middleware.WithPartitionKey(secret), middleware.WithClock(clock))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok)
	w := serve(r, "GET", "/")
	pk := func(key string) string {
		sum := sha256.Sum256(append(append([]byte(nil), secret...), key...))
		return ";pk=:" + base64.StdEncoding.EncodeToString(sum[:9]) + ":"
	}
	// httptest's requests come from 192.0.2.1:1234; remote keys by RemoteAddr.
	want := `"per-second";r=9;t=1` + pk("per-second:192.0.2.1:1234") + `, "per-minute";r=99;t=60` + pk("per-minute:192.0.2.1:1234")
	if got := w.Header().Get("RateLimit"); got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	if got := w.Header().Get("RateLimit-Policy"); got != `"per-second";q=10;w=1, "per-minute";q=100;w=60` {
		t.Errorf("RateLimit-Policy %q, want no pk", got)
	}
}
