package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestDenyCacheAnswersLocally: once Redis has denied a key, the store
// answers it with no round trip until its RetryAfter, reporting the
// remaining wait; then it asks Redis again.
func TestDenyCacheAnswersLocally(t *testing.T) {
	client, hook := countedClient(t)
	s, clk := denyCacheStore(t, client)
	ctx := context.Background()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, Key: "k"}
	for i := range 2 {
		if d, err := s.Take(ctx, check); err != nil || !d[0].Allowed {
			t.Fatalf("Take %d = %+v, %v; want admitted", i, d, err)
		}
	}
	d, err := s.Take(ctx, check)
	if err != nil || d[0].Allowed || d[0].RetryAfter != 50*time.Second {
		t.Fatalf("third Take = %+v, %v; want denied with RetryAfter 50s", d, err)
	}
	hook.reset()
	for i := 1; i <= 5; i++ {
		clk.t = clk.t.Add(9 * time.Second)
		d, err := s.Take(ctx, check)
		if err != nil || d[0].Allowed {
			t.Fatalf("cached Take %d = %+v, %v; want denied", i, d, err)
		}
		if got, want := d[0].RetryAfter, 50*time.Second-time.Duration(i)*9*time.Second; got != want {
			t.Fatalf("cached Take %d: RetryAfter = %s, want %s", i, got, want)
		}
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Fatalf("cached denials sent %v to Redis", cmds)
	}
	// A different cost, or a Take with another check, goes to Redis.
	if _, err := s.Take(ctx, algorithms.Check{Spec: check.Spec, Key: "k", Cost: 2}); err != nil {
		t.Fatal(err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("a Take of another cost sent %v, want one call", cmds)
	}
	clk.t = clk.t.Add(5 * time.Second) // the window is over
	hook.reset()
	if d, err := s.Take(ctx, check); err != nil || !d[0].Allowed {
		t.Fatalf("Take after RetryAfter = %+v, %v; want admitted", d, err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("a Take after RetryAfter sent %v, want one call", cmds)
	}
}

// TestDenyCacheNeverAdmits replays random traces (time moving forward) on a
// store with a tiny deny cache and on one without, with the same clock: every
// Take is admitted by one exactly when it is by the other, and the cache
// answers some of them. Some Takes name a key twice.
func TestDenyCacheNeverAdmits(t *testing.T) {
	client, hook := countedClient(t)
	for seed := range 12 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 5))
			clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
			plain := clockedStore(t, client, clk)
			cached := clockedStore(t, client, clk, redisstore.WithDenyCache(3))
			var specs []algorithms.Spec
			for _, k := range algorithms.Kinds {
				s := randomSpec(r, k)
				s.Limit = min(s.Limit, 4)
				if s.Burst > 0 {
					s.Burst = min(s.Burst, 4)
				}
				if s.Validate() != nil {
					s = algorithms.Spec{Algorithm: k, Limit: 3, Window: time.Second}
					if k == algorithms.SlidingBuckets {
						s.Buckets = 4
					}
				}
				specs = append(specs, s)
			}
			ctx := context.Background()
			local := 0
			var checks []algorithms.Check
			for i := range 300 {
				if checks != nil && r.IntN(2) == 0 {
					// The same client again, soon: what the cache is for.
					clk.t = clk.t.Add(time.Duration(r.Int64N(int64(time.Millisecond))))
				} else {
					w := specs[r.IntN(len(specs))].Window
					clk.t = clk.t.Add(time.Duration(r.Int64N(int64(w)/3 + 1)))
					checks = []algorithms.Check{{Spec: specs[r.IntN(len(specs))], Key: fmt.Sprint(r.IntN(2))}}
					if r.IntN(3) == 0 {
						checks = append(checks, algorithms.Check{Spec: specs[r.IntN(len(specs))], Key: "x"})
					}
					if r.IntN(5) == 0 {
						checks = append(checks, checks[0]) // a key named twice
					}
				}
				want, err := plain.Take(ctx, checks...)
				hook.reset()
				got, cerr := cached.Take(ctx, checks...)
				if verr := algorithms.ValidateChecks(checks); verr != nil {
					// A key twice past what it ever admits at once: the
					// error of both stores, never a cached answer.
					if err == nil || cerr == nil || err.Error() != verr.Error() || cerr.Error() != verr.Error() {
						t.Fatalf("step %d: Take(%+v): Redis alone %v, cached store %v; want %v", i, checks, err, cerr, verr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if cerr != nil {
					t.Fatal(cerr)
				}
				if cmds, _ := hook.snapshot(); len(cmds) == 0 {
					local++
				}
				for j := range want {
					if got[j].Allowed != want[j].Allowed {
						t.Fatalf("step %d at %s check %d: %+v\ncached store %+v\nRedis alone  %+v", i, clk.t.Format(time.RFC3339Nano), j, checks, got, want)
					}
				}
			}
			if local == 0 {
				t.Fatalf("the deny cache answered no Take locally in 300 steps")
			}
			t.Logf("%d of 300 Takes answered locally", local)
		})
	}
}

// TestDenyCacheRepeatedKey: in a Take that names one key twice, the second
// check sees the first one's consumption, so its denial says nothing about
// the key alone. Here a limit of 2 with one unit left: Take(k, k) is denied
// (the second k), yet k alone would pass; the cache must not answer k
// alone with that denial.
func TestDenyCacheRepeatedKey(t *testing.T) {
	s, _ := denyCacheStore(t, newClient(t))
	ctx := context.Background()
	for _, k := range algorithms.Kinds {
		check := algorithms.Check{Spec: smallSpec(k), Key: "k"}
		check.Spec.Limit = 2
		if k == algorithms.LeakyQueue {
			// Capacity 2: a queue of one admits k twice in no Take (see
			// algorithms.ValidateChecks).
			check.Spec.MaxDelay = check.Spec.Window / 2
		}
		capacity := check.Spec.Capacity()
		for i := range capacity - 1 {
			if d, err := s.Take(ctx, check); err != nil || !d[0].Allowed {
				t.Fatalf("%s: Take %d = %+v, %v; want admitted", k, i+1, d, err)
			}
		}
		d, err := s.Take(ctx, check, check)
		if err != nil || d[1].Allowed {
			t.Fatalf("%s: Take(k, k) with one unit left = %+v, %v; want the second denied", k, d, err)
		}
		if d, err := s.Take(ctx, check); err != nil || !d[0].Allowed {
			t.Fatalf("%s: Take(k) with one unit left after the denied Take(k, k) = %+v, %v; want admitted (as Redis decides)", k, d, err)
		}
	}
}

// denyCacheStore returns a store on client, under a prefix of its own,
// with a deny cache of 16 keys, and the manual clock it reads, set to
// 2026-11-30 07:00:10 UTC.
func denyCacheStore(t testing.TB, client redis.UniversalClient) (*redisstore.Store, *manualClock) {
	t.Helper()
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}
	return clockedStore(t, client, clk, redisstore.WithDenyCache(16)), clk
}
