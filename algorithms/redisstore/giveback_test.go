package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestGiveBackForeignValueWritesNothing: a key of the give-back holding a
// value the store did not write fails the call before any write, as a
// Take does: the other checks' units stay spent (giveback.lua loads every
// key before giving any back), and the application's value is untouched.
func TestGiveBackForeignValueWritesNothing(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
		t.Run(name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range []algorithms.Spec{
				{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Hour},
				{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Hour},
				{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Hour},
			} {
				b := algorithms.Check{Spec: kind, Key: "b-" + string(kind.Algorithm)}
				app := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 2, Window: time.Hour}, Key: "app"}
				key := redisKeys(prefix, app)[0]
				if err := admin.Set(ctx, key, "application data", 0).Err(); err != nil {
					t.Fatal(err)
				}
				ds, err := s.Take(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				// b is the last check: given back first, were app not
				// loaded before.
				checks := []algorithms.Check{app, b}
				taken := []algorithms.Decision{{Allowed: true, ResetAfter: time.Hour}, ds[0]}
				if err := s.GiveBack(ctx, make([]algorithms.Refunded, 2), checks, taken, 0); !errors.Is(err, algorithms.ErrKeyState) {
					t.Errorf("%s: GiveBack with a foreign value: error %v, want one matching algorithms.ErrKeyState", kind.Algorithm, err)
				}
				next, err := s.Take(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				if !next[0].Allowed || next[0].Remaining != 0 {
					t.Errorf("%s: after the failed give-back b admits %+v, want its unit still spent (Remaining 0)", kind.Algorithm, next[0])
				}
				if v, err := admin.Get(ctx, key).Result(); err != nil || v != "application data" {
					t.Errorf("the application's value: %q, %v", v, err)
				}
			}
		})
	}
}
