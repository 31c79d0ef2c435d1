package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestBreakerIgnoresKeyErrors: an error Redis replies about one key (a
// value of the wrong type, or one the store did not write, under a prefix
// that collides with the application's keys) says that Redis is up and
// answering. The breaker counted it as a failure of Redis: a few Takes of
// that one key opened the circuit, and every client's Takes got
// ErrCircuitOpen (fail open: no limit for anyone) for the cool-down.
func TestBreakerIgnoresKeyErrors(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	for _, foreign := range []string{"hash", "string"} {
		prefix := uniquePrefix(t)
		s, err := redisstore.New(newClient(t), redisstore.WithPrefix(prefix), redisstore.WithCircuitBreaker(2, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		bad := algorithms.Check{Spec: foreignSpecs[0], Key: "app"}
		key := redisKeys(prefix, bad)[0]
		if foreign == "hash" {
			err = admin.HSet(ctx, key, "user", "alice").Err()
		} else {
			err = admin.Set(ctx, key, "application data", 0).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := s.Take(ctx, bad); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
				t.Fatalf("%s: Take %d of the foreign key = %v, want the key's error", foreign, i, err)
			}
		}
		good := algorithms.Check{Spec: foreignSpecs[0], Key: "someone-else"}
		if ds, err := s.Take(ctx, good); err != nil || !ds[0].Allowed {
			t.Errorf("%s: after 5 errors about one key, another client's Take = %+v, %v; want it decided", foreign, ds, err)
		}
	}
}
