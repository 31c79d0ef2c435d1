package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestSlidingLogTotalEvicted: a sliding_log key is two Redis keys, the
// total and the list of events, both with an expiry, so Redis under
// maxmemory (an allkeys or volatile policy) may evict the total alone. The
// list the store wrote still holds every event the total counted, so the
// store must go on deciding exactly as the memory store, which lost
// nothing: not fail every Take of that client (algorithms.ErrKeyState)
// until the list expires, which the middleware would turn into an
// unlimited client when it fails open. Random traces of Takes and
// GiveBacks of sliding_log checks (some stacked with another kind),
// deleting a random key's total between steps, through the function
// library, the script fallback and on the cluster; every key, a rebuilt
// total too, keeps an expiry.
func TestSlidingLogTotalEvicted(t *testing.T) {
	ctx := context.Background()
	clients := []struct {
		name string
		c    redis.UniversalClient
		keys []string
	}{
		{"function", newBoundClient(t), []string{"a", "b", "c"}},
		{"script", noFunctionsBoundClient(t), []string{"a", "b", "c"}},
		{"cluster", sharedBoundCluster(t), keysOnThreeSlots()},
	}
	deleted := 0
	for _, cl := range clients {
		for seed := range seedCount(8, 3) {
			t.Run(fmt.Sprint(cl.name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(seed), 4242))
				clk := &manualClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
				mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				prefix := uniquePrefix(t)
				rs, err := redisstore.New(cl.c, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				specs := []algorithms.Spec{
					smallSpec(algorithms.SlidingLog),
					{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute},
					randomSpec(r, algorithms.SlidingLog),
					randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]),
				}
				type taken struct {
					at     time.Time
					checks []algorithms.Check
					ds     []algorithms.Decision
				}
				var admitted []taken
				var history []string
				// expiring checks that every key of checks the step may
				// have written, a rebuilt total too, has an expiry. It
				// reads those keys only: scanning the prefix at every step
				// walked the whole keyspace of the server the package's
				// tests share, 150 times a trace (164 s of the package's
				// run under load).
				expiring := func(checks []algorithms.Check) {
					t.Helper()
					for _, c := range checks {
						for _, k := range redisKeys(prefix, c) {
							if ttl := cl.c.PTTL(ctx, k).Val(); ttl == -1 {
								t.Fatalf("%s\nkey %s has no expiry", join(history), k)
							}
						}
					}
				}
				for i := range 150 {
					step(r, clk, specs[r.IntN(3)].Window)
					if r.IntN(3) == 0 {
						// Evict the total of a sliding_log key, if it is there.
						c := algorithms.Check{Spec: specs[r.IntN(3)], Key: cl.keys[r.IntN(len(cl.keys))]}
						ks := redisKeys(prefix, c)
						if n := cl.c.Exists(ctx, ks[1]).Val(); n == 1 {
							if err := cl.c.Del(ctx, ks[0]).Err(); err != nil {
								t.Fatal(err)
							}
							deleted++
							history = append(history, fmt.Sprintf("step %d: deleted %s", i, ks[0]))
						}
					}
					if len(admitted) > 0 && r.IntN(4) == 0 {
						j := len(admitted) - 1
						tk := admitted[j]
						admitted = admitted[:j]
						waited := max(clk.t.Sub(tk.at), 0)
						wdst := make([]algorithms.Refunded, len(tk.checks))
						gdst := make([]algorithms.Refunded, len(tk.checks))
						werr := mem.GiveBack(ctx, wdst, tk.checks, tk.ds, waited)
						gerr := rs.GiveBack(ctx, gdst, tk.checks, tk.ds, waited)
						history = append(history, fmt.Sprintf("step %d at %d: give-back of the Take at %d: %+v", i, clk.t.UnixNano(), tk.at.UnixNano(), tk.checks))
						if werr != nil || gerr != nil {
							t.Fatalf("%s\ngive-back errors: memory %v, redis %v", join(history), werr, gerr)
						}
						for k := range wdst {
							if gdst[k] != wdst[k] {
								t.Fatalf("%s\ngive-back report of check %d: redis %+v, memory %+v", join(history), k, gdst[k], wdst[k])
							}
						}
						expiring(tk.checks)
						continue
					}
					checks := randomChecks(r, specs, cl.keys, 2)
					ds, err := takeAlike(t, mem, rs, clk, &history, i, checks)
					if err == nil && ds[0].Allowed {
						admitted = append(admitted, taken{clk.t, checks, ds})
					}
					expiring(checks)
				}
				// No key under the prefix, one the steps did not look at
				// included, lacks an expiry.
				for _, k := range keysUnder(t, cl.c, prefix) {
					if ttl := cl.c.PTTL(ctx, k).Val(); ttl < 0 {
						t.Fatalf("%s\nkey %s has no expiry (PTTL %s)", join(history), k, ttl)
					}
				}
			})
		}
	}
	if deleted == 0 {
		t.Error("no total was deleted")
	}
}

// TestSlidingLogListNotTheStores: a list under a sliding_log's ":l" key
// with no total is read as the store's own only when every item is an
// event as the store writes it ("s n cost", n below 10^9, cost at least 1,
// in order of instant); any other list is the application's and fails the
// Take with algorithms.ErrKeyState, untouched.
func TestSlidingLogListNotTheStores(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	now := int64(1_764_583_200)
	ev := func(s, ns, n int64) string { return fmt.Sprintf("%d %d %d", s, ns, n) }
	lists := [][]string{
		{"first", "second"},
		{ev(now, 0, 1), "x"},
		{ev(now, 1_000_000_000, 1)},
		{ev(now, 0, 0)},
		{ev(now, 5, 1), ev(now, 4, 1)},
		{ev(now-1, 0, 1) + " "},
		{"+1 0 1"},
		{ev(now, 0, 1), fmt.Sprintf("%d 0 99999999999999999999", now)},
		// doc.go's every clause: no leading zeros, no "-0", at most 15
		// digits, in order across seconds, costs summing below 2^52.
		{fmt.Sprintf("0%d 0 1", now)},
		{fmt.Sprintf("%d 05 1", now)},
		{fmt.Sprintf("%d 0 01", now)},
		{"-0 0 1"},
		{"1000000000000000 0 1"},
		{ev(now, 0, 1), ev(now-1, 5, 1)},
		slices.Repeat([]string{ev(now, 0, 999_999_999_999_999)}, 5),
	}
	for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
		for _, items := range lists {
			prefix := uniquePrefix(t)
			clk := &manualClock{t: time.Unix(now, 10)}
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			c := algorithms.Check{Spec: foreignSpecs[2], Key: "app"}
			lkey := redisKeys(prefix, c)[1]
			if err := admin.RPush(ctx, lkey, items).Err(); err != nil {
				t.Fatal(err)
			}
			if ds, err := s.Take(ctx, c); err == nil {
				t.Errorf("%s %q: Take = %+v, nil error; want an error", name, items, ds)
			} else if !errors.Is(err, algorithms.ErrKeyState) {
				t.Errorf("%s %q: Take error %q does not match algorithms.ErrKeyState", name, items, err)
			}
			if got := admin.LRange(ctx, lkey, 0, -1).Val(); fmt.Sprint(got) != fmt.Sprint(items) {
				t.Errorf("%s %q: the application's list is now %q", name, items, got)
			}
			if n := admin.Exists(ctx, redisKeys(prefix, c)[0]).Val(); n != 0 {
				t.Errorf("%s %q: a total was written", name, items)
			}
		}
	}
}
