package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// review3Spec returns a spec for the all-operations traces: one of
// algotest.EdgeSpecs (the bounds: limits of 1 and 10^9, windows of 1 ms
// and 24 h, 3600 sub-windows of 278 ns, the largest bursts and queues),
// one of randomSpec's, or a small one that denies often.
func review3Spec(r *rand.Rand, edges []algorithms.Spec) algorithms.Spec {
	switch r.IntN(3) {
	case 0:
		return edges[r.IntN(len(edges))]
	case 1:
		return randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))])
	}
	return smallSpec(algorithms.Kinds[r.IntN(len(algorithms.Kinds))])
}

// review3Check returns a random check of one of specs on one of keys: a
// window kind judged now and then at a limit of its own (lower, the
// Spec's, or raised for the raisable kinds), a cost up to the capacity
// it is judged at.
func review3Check(r *rand.Rand, specs []algorithms.Spec, keys []string) algorithms.Check {
	s := specs[r.IntN(len(specs))]
	c := algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))]}
	if s.Algorithm.Windowed() {
		switch r.IntN(6) {
		case 0:
			c.Limit = 1 + r.Int64N(s.Limit)
		case 1:
			c.Limit = s.Limit
		case 2:
			if s.Algorithm.Raisable() {
				c.Limit = min(algorithms.MaxLimit, s.Limit+1+r.Int64N(2*s.Limit))
			}
		}
	}
	c.Cost = randomCost(r, c.Judged())
	return c
}

// review3Step moves clk as step does, forward only when forward.
func review3Step(r *rand.Rand, clk *manualClock, w time.Duration, forward bool) {
	before := clk.t
	step(r, clk, w)
	if forward && clk.t.Before(before) {
		clk.t = before.Add(before.Sub(clk.t))
	}
}

// TestReview3AllOperationsMatchMemoryStore replays random traces mixing
// every operation of the store (Take, with checks judged at limits of
// their own and keys named twice; Peek; GiveBack; Refund; Reset) on specs
// at the bounds, on the memory store and on Redis with the same clock, and
// requires every Decision and Refunded to match (in a quarter of the
// traces through the deny cache, on a clock that only goes forward). In a quarter of the
// traces the clock goes back too; in another quarter it goes forward
// faster than real time, with WithMinTTL(0) (keys expire with their
// state, by Redis's clock), and after each operation
// every key whose state still matters to the memory store (a Peek's
// ResetAfter above 0) must exist in Redis with an expiry no earlier than
// that ResetAfter, less the real time since the clock was last set.
func TestReview3AllOperationsMatchMemoryStore(t *testing.T) {
	edges := algotest.EdgeSpecs()
	client := newBoundClient(t)
	scriptClient := noFunctionsBoundClient(t)
	starts := []time.Time{
		time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC),
		time.Unix(0, 0),
		time.Unix(-86400*365*12, 999_999_999),
		time.Unix(1<<33, 5),
	}
	ctx := context.Background()
	for seed := range seedCount(40, 8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 0x5e71e3))
			forward := seed%4 != 3
			expiring := seed%4 == 1 // keys expire with their state
			clk := &manualClock{t: starts[seed%len(starts)].Add(time.Duration(r.Int64N(int64(time.Hour))))}
			var c redis.UniversalClient = client
			if seed%2 == 1 {
				c = scriptClient
			}
			mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			prefix := uniquePrefix(t)
			opts := []redisstore.Option{redisstore.WithClock(clk), redisstore.WithPrefix(prefix)}
			if expiring {
				// Keys expire with their state, in real time, which the
				// clock outpaces (below).
				opts = append(opts, redisstore.WithMinTTL(0))
			}
			if seed%4 == 2 {
				// A clock that only goes forward: the deny cache answers
				// as Redis would (see WithDenyCache).
				opts = append(opts, redisstore.WithDenyCache(64))
			}
			rs, err := redisstore.New(c, opts...)
			if err != nil {
				t.Fatal(err)
			}
			var specs []algorithms.Spec
			for range 3 {
				specs = append(specs, review3Spec(r, edges))
			}
			keys := []string{"a", "b"}
			type taken struct {
				at     time.Time
				checks []algorithms.Check
				ds     []algorithms.Decision
			}
			var admitted []taken
			var history []string
			last := time.Now()
			for i := range 250 {
				review3Step(r, clk, specs[r.IntN(len(specs))].Window, forward)
				if expiring {
					// Faster than real time, by which Redis expires keys,
					// by 3 ms a step: an expiry Redis counts from its
					// clock's current millisecond, or from the instant
					// a script began, starts a little before the write.
					now := time.Now()
					clk.t = clk.t.Add(now.Sub(last) + 3*time.Millisecond)
					last = now
				}
				checks := make([]algorithms.Check, 1+r.IntN(3))
				for j := range checks {
					checks[j] = review3Check(r, specs, keys)
				}
				checks = algotest.FitRepeats(checks)
				switch op := r.IntN(12); {
				case op == 0:
					want := make([]algorithms.Decision, len(checks))
					got := make([]algorithms.Decision, len(checks))
					werr := mem.Peek(ctx, want, checks)
					gerr := rs.Peek(ctx, got, checks)
					history = append(history, fmt.Sprintf("peek %d at %d: %+v", i, clk.t.UnixNano(), checks))
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%s\npeek errors differ: memory %v, redis %v", join(history), werr, gerr)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s\npeek check %d: redis %+v\n            memory %+v", join(history), j, got[j], want[j])
						}
					}
				case op <= 3 && len(admitted) > 0:
					j := len(admitted) - 1 - r.IntN(min(len(admitted), 3))
					tk := admitted[j]
					admitted = append(admitted[:j], admitted[j+1:]...)
					waited := max(clk.t.Sub(tk.at), 0)
					want := make([]algorithms.Refunded, len(tk.checks))
					got := make([]algorithms.Refunded, len(tk.checks))
					what := "giveback"
					var werr, gerr error
					if op == 3 {
						what = "refund"
						werr = mem.Refund(ctx, want, tk.checks, tk.ds, waited)
						gerr = rs.Refund(ctx, got, tk.checks, tk.ds, waited)
					} else {
						werr = mem.GiveBack(ctx, want, tk.checks, tk.ds, waited)
						gerr = rs.GiveBack(ctx, got, tk.checks, tk.ds, waited)
					}
					history = append(history, fmt.Sprintf("%s %d at %d of the Take at %d, waited %d: %+v %+v", what, i, clk.t.UnixNano(), tk.at.UnixNano(), waited, tk.checks, tk.ds))
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%s\n%s errors differ: memory %v, redis %v", join(history), what, werr, gerr)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s\n%s check %d: redis %+v\n            memory %+v", join(history), what, j, got[j], want[j])
						}
					}
				case op == 4 && r.IntN(3) == 0:
					werr := mem.Reset(ctx, checks...)
					gerr := rs.Reset(ctx, checks...)
					history = append(history, fmt.Sprintf("reset %d at %d: %+v", i, clk.t.UnixNano(), checks))
					if werr != nil || gerr != nil {
						t.Fatalf("%s\nreset errors: memory %v, redis %v", join(history), werr, gerr)
					}
				default:
					ds, err := takeAlike(t, mem, rs, clk, &history, i, checks)
					if err == nil && allowed(ds) {
						admitted = append(admitted, taken{clk.t, checks, ds})
					}
				}
				if expiring {
					review3Expiries(t, c, mem, prefix, specs, keys, last, history)
				}
			}
		})
	}
}

// review3Expiries fails t when a key whose state matters to mem (a
// Peek's ResetAfter above 0) is missing in Redis, or expires before that
// ResetAfter less the real time since set, when the clock was last set.
func review3Expiries(t *testing.T, c redis.UniversalClient, mem *algorithms.MemoryStore, prefix string, specs []algorithms.Spec, keys []string, set time.Time, history []string) {
	t.Helper()
	ctx := context.Background()
	for _, s := range specs {
		for _, k := range keys {
			ch := algorithms.Check{Spec: s, Key: k}
			d := make([]algorithms.Decision, 1)
			if err := mem.Peek(ctx, d, []algorithms.Check{ch}); err != nil {
				t.Fatal(err)
			}
			if d[0].ResetAfter == 0 {
				continue
			}
			rk := redisKeys(prefix, ch)
			if s.Algorithm == algorithms.SlidingLog {
				rk = rk[1:] // the list holds the state (doc.go)
			}
			for _, key := range rk {
				ttl, err := c.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				slack := time.Since(set)
				if ttl == -1 || max(ttl, 0)+slack+2*time.Millisecond < d[0].ResetAfter {
					t.Fatalf("%s\nkey %s (%s) expires in %v (-2: missing, -1: never), its state matters for %v more (slack %v)",
						join(history), key, s, ttl, d[0].ResetAfter, slack)
				}
			}
		}
	}
}

// TestReview3ServerClockKeysOutliveTheirState replays random traces of
// every operation on the server's clock, without WithMinTTL, where the
// fast path keeps a window key's expiry (KEEPTTL) when it rewrites the
// window it holds: specs of windows from 3 ms to 300 ms, so that real time
// crosses their windows, checks judged at limits of their own, give-backs
// and refunds measured on the local clock. After each operation every
// key's expiry is read (PTTL), then the store peeks at it: a key the peek
// finds still mattering for ResetAfter must not expire more than 2 ms
// (Redis's millisecond clock) before that.
func TestReview3ServerClockKeysOutliveTheirState(t *testing.T) {
	ctx := context.Background()
	clients := []redis.UniversalClient{newBoundClient(t), noFunctionsBoundClient(t)}
	for seed := range seedCount(16, 4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 0x77e))
			c := clients[seed%2]
			prefix := uniquePrefix(t)
			rs, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
			if err != nil {
				t.Fatal(err)
			}
			windows := []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 7_000_001}
			var specs []algorithms.Spec
			for range 3 {
				k := algorithms.Kinds[r.IntN(len(algorithms.Kinds))]
				if r.IntN(2) == 0 {
					k = []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow}[r.IntN(2)]
				}
				s := algorithms.Spec{Algorithm: k, Limit: 1 + r.Int64N(6), Window: windows[r.IntN(len(windows))]}
				switch k {
				case algorithms.SlidingBuckets:
					s.Buckets = 1
					if int64(s.Window)%5 == 0 {
						s.Buckets = 5
					}
				case algorithms.LeakyQueue:
					s.MaxDelay = s.Window
				}
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
				specs = append(specs, s)
			}
			keys := []string{"a", "b"}
			type taken struct {
				at     time.Time
				checks []algorithms.Check
				ds     []algorithms.Decision
			}
			var admitted []taken
			var history []string
			for i := range 300 {
				checks := make([]algorithms.Check, 1+r.IntN(2))
				for j := range checks {
					checks[j] = review3Check(r, specs, keys)
				}
				checks = algotest.FitRepeats(checks)
				switch op := r.IntN(10); {
				case op <= 2 && len(admitted) > 0:
					j := len(admitted) - 1 - r.IntN(min(len(admitted), 3))
					tk := admitted[j]
					admitted = append(admitted[:j], admitted[j+1:]...)
					out := make([]algorithms.Refunded, len(tk.checks))
					var err error
					if op == 2 {
						err = rs.Refund(ctx, out, tk.checks, tk.ds, time.Since(tk.at))
					} else {
						err = rs.GiveBack(ctx, out, tk.checks, tk.ds, time.Since(tk.at))
					}
					history = append(history, fmt.Sprintf("%d: give-back/refund(%d) of %+v: %+v %v", i, op, tk.checks, out, err))
					if err != nil {
						t.Fatalf("%s", join(history))
					}
				case op == 3 && r.IntN(4) == 0:
					err := rs.Reset(ctx, checks...)
					history = append(history, fmt.Sprintf("%d: reset %+v: %v", i, checks, err))
					if err != nil {
						t.Fatalf("%s", join(history))
					}
				default:
					at := time.Now()
					ds, err := rs.Take(ctx, checks...)
					history = append(history, fmt.Sprintf("%d: take %+v: %+v %v", i, checks, ds, err))
					if err != nil {
						t.Fatalf("%s", join(history))
					}
					if allowed(ds) {
						admitted = append(admitted, taken{at, checks, ds})
					}
				}
				for _, s := range specs {
					for _, k := range keys {
						ch := algorithms.Check{Spec: s, Key: k}
						rk := redisKeys(prefix, ch)
						key := rk[len(rk)-1] // a sliding_log's list holds its state
						ttl, err := c.PTTL(ctx, key).Result()
						if err != nil {
							t.Fatal(err)
						}
						d := make([]algorithms.Decision, 1)
						if err := rs.Peek(ctx, d, []algorithms.Check{ch}); err != nil {
							t.Fatal(err)
						}
						if d[0].ResetAfter > 0 && (ttl < 0 || ttl+2*time.Millisecond < d[0].ResetAfter) {
							t.Fatalf("%s\nkey %s (%s) expires in %v (-2: missing, -1: never) before a peek that finds its state mattering for %v more: %+v",
								join(history), key, s, ttl, d[0].ResetAfter, d[0])
						}
					}
				}
			}
		})
	}
}
