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

// TestGiveBackServerClock: on the Redis server's clock (no WithClock), a
// caller that measures waited from before its Take, as the middleware
// does, reckons the Take a round trip early and the give-back a round
// trip late: the Take's window, bucket and log instant are still found
// (the nearest boundary, the nearest instant), so a unit taken and given
// back at once leaves every kind with its whole allowance but for what a
// bucket refills in a round trip (Remaining is then one short for a
// moment).
func TestGiveBackServerClock(t *testing.T) {
	ctx := context.Background()
	for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
		t.Run(name, func(t *testing.T) {
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			// fixed_window's day (a Take and its give-back a millisecond
			// apart straddle its end once in 10^7 runs).
			for _, spec := range []algorithms.Spec{
				{Algorithm: algorithms.FixedWindow, Limit: 3, Window: 24 * time.Hour},
				{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: time.Hour},
				{Algorithm: algorithms.SlidingLog, Limit: 3, Window: time.Hour},
				{Algorithm: algorithms.SlidingBuckets, Limit: 3, Window: time.Hour, Buckets: 60},
				{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Hour},
				{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: time.Hour},
			} {
				c := []algorithms.Check{{Spec: spec, Key: "k"}}
				for i := range 10 {
					before := time.Now()
					ds, err := s.Take(ctx, c...)
					if err != nil {
						t.Fatal(err)
					}
					if !ds[0].Allowed {
						t.Fatalf("%s: Take %d denied (%+v): an earlier unit did not come back", spec.Algorithm, i, ds[0])
					}
					out := make([]algorithms.Refunded, 1)
					if err := s.GiveBack(ctx, out, c, ds, time.Since(before)); err != nil {
						t.Fatal(err)
					}
					min := spec.Limit
					if spec.Algorithm == algorithms.TokenBucket || spec.Algorithm == algorithms.LeakyBucket {
						min--
					}
					if !out[0].Given || out[0].Remaining < min {
						t.Fatalf("%s: give-back %d: %+v, want given and at least %d left", spec.Algorithm, i, out[0], min)
					}
				}
			}
		})
	}
}
