package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestTakeReadsTheValueNotItsLastWrite: the fast path remembers the numbers
// of the state it last wrote to each key (lua/fastlib.lua), and must use
// them only while the key still holds that very value. Here a key the
// store just wrote is overwritten behind its back, with another state of
// the store's (the full one of a drained key) and with the application's
// own data: the next Take denies, and fails, as it does on a key it never
// saw. For every fast-path kind, alone (GET) and with another check (MGET),
// on the server's clock and an injected one.
func TestTakeReadsTheValueNotItsLastWrite(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	client := newClient(t)
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour},
		{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: time.Hour},
		{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: time.Hour},
		{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Hour, MaxDelay: time.Second},
	}
	other := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, Key: "other"}
	for _, injected := range []bool{false, true} {
		for _, spec := range specs {
			for _, n := range []int{1, 2} {
				prefix := uniquePrefix(t)
				opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
				if injected {
					opts = append(opts, redisstore.WithClock(algotest.NewClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))))
				}
				s, err := redisstore.New(client, opts...)
				if err != nil {
					t.Fatal(err)
				}
				take := func(key string) ([]algorithms.Decision, error) {
					checks := []algorithms.Check{{Spec: spec, Key: key}}
					if n == 2 {
						checks = append(checks, other)
					}
					return s.Take(ctx, checks...)
				}
				name := func() string {
					return map[bool]string{false: "server clock", true: "injected clock"}[injected] + " " + string(spec.Algorithm) + " " + map[int]string{1: "alone", 2: "with another check"}[n]
				}
				// Drain "full" (a leaky_queue takes one place per Take and
				// holds at most MaxDelay·L/W + 1), then take once on "a".
				for {
					ds, err := take("full")
					if err != nil {
						t.Fatal(err)
					}
					if !ds[0].Allowed {
						break
					}
				}
				if ds, err := take("a"); err != nil || !ds[0].Allowed {
					t.Fatalf("%s: first Take on a = %+v, %v; want admitted", name(), ds, err)
				}
				keyA := redisKeys(prefix, algorithms.Check{Spec: spec, Key: "a"})[0]
				keyFull := redisKeys(prefix, algorithms.Check{Spec: spec, Key: "full"})[0]
				full, err := admin.Get(ctx, keyFull).Result()
				if err != nil {
					t.Fatal(err)
				}
				if err := admin.Set(ctx, keyA, full, time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
				if ds, err := take("a"); err != nil || ds[0].Allowed {
					t.Errorf("%s: Take on a after it was given a full state = %+v, %v; want denied", name(), ds, err)
				}
				if err := admin.Set(ctx, keyA, "application data", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
				if ds, err := take("a"); err == nil {
					t.Errorf("%s: Take on a after the application wrote it = %+v, nil error; want an error", name(), ds)
				}
			}
		}
	}
}
