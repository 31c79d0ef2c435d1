package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// callCounter counts the commands a client sends (not its pipelines).
type callCounter struct {
	redistest.PassHooks
	n atomic.Int64
}

func (h *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

// TestJudgedTracesPeekGiveBackDenyCache replays random traces of Takes,
// Peeks and GiveBacks of window-kind checks judged at random limits
// (algorithms.Check.Limit: small, random, the Spec's, or none), the same
// Take often repeated, on the memory store and on Redis with the same
// clock (starts before 1970 too), and requires every Decision and every
// Refunded to match: through the function library, the script fallback
// and the cluster. Even seeds run with WithDenyCache on a clock that only
// goes forward (a clock going back is the cache's documented exception),
// so that a cached denial at one limit is checked against what the memory
// store decides at the limit asked; over all seeds the cache must have
// answered some Takes with no round trip.
func TestJudgedTracesPeekGiveBackDenyCache(t *testing.T) {
	var windowed []algorithms.Kind
	for _, k := range algorithms.Kinds {
		if k.Windowed() {
			windowed = append(windowed, k)
		}
	}
	judgedTraces(t, seedCount(40, 6), 31337, windowed, func() tracePicker { return randomJudgedCheck })
}

// A tracePicker returns a random check of one of specs on one of keys.
type tracePicker func(r *rand.Rand, specs []algorithms.Spec, keys []string) algorithms.Check

// judgedTraces replays n random traces (seeds 0 to n-1, on stream) of
// Takes, Peeks and GiveBacks of checks of three Specs of kinds, each
// picked by a picker newPicker makes for the trace, the same Take often
// repeated, on the memory store and on Redis with the same clock, and
// requires every Decision and every Refunded to match (see
// TestJudgedTracesPeekGiveBackDenyCache).
func judgedTraces(t *testing.T, n int, stream uint64, kinds []algorithms.Kind, newPicker func() tracePicker) {
	t.Helper()
	var answered atomic.Int64
	clients := []func(*testing.T) redis.UniversalClient{
		func(t *testing.T) redis.UniversalClient { return newClient(t) },
		func(t *testing.T) redis.UniversalClient { return noFunctionsClient(t) },
		func(t *testing.T) redis.UniversalClient { return sharedCluster(t) },
	}
	starts := []time.Time{
		time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC),
		time.Unix(0, 0),
		time.Unix(-86400*365*12, 999_999_999),
		time.Unix(1<<33, 5),
	}
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), stream))
			pick := newPicker()
			clk := &manualClock{t: starts[seed%len(starts)].Add(time.Duration(r.Int64N(int64(time.Hour))))}
			client := clients[seed%len(clients)](t)
			calls := &callCounter{}
			if c, ok := client.(*redis.Client); ok && seed%2 == 0 {
				c.AddHook(calls)
			} else {
				calls = nil
			}
			mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			var rs *redisstore.Store
			if seed%2 == 0 {
				rs = clockedStore(t, client, clk, redisstore.WithDenyCache(100))
			} else {
				rs = clockedStore(t, client, clk)
			}
			var specs []algorithms.Spec
			for range 3 {
				k := kinds[r.IntN(len(kinds))]
				if r.IntN(2) == 0 {
					s := smallSpec(k)
					s.Limit = 5 + r.Int64N(5)
					specs = append(specs, s)
				} else {
					specs = append(specs, randomSpec(r, k))
				}
			}
			keys := keysOnThreeSlots()[:3]
			var history []string
			ctx := context.Background()
			type taken struct {
				at     time.Time
				checks []algorithms.Check
				ds     []algorithms.Decision
			}
			var admitted []taken
			var prev []algorithms.Check
			for i := range 200 {
				before := clk.t
				step(r, clk, specs[r.IntN(len(specs))].Window)
				if seed%2 == 0 && clk.t.Before(before) {
					clk.t = before.Add(before.Sub(clk.t))
				}
				checks := make([]algorithms.Check, 1+r.IntN(3))
				for j := range checks {
					checks[j] = pick(r, specs, keys)
				}
				checks = algotest.FitRepeats(checks)
				if prev != nil && r.IntN(3) == 0 {
					checks = prev
				}
				prev = checks
				switch r.IntN(5) {
				case 0:
					want := make([]algorithms.Decision, len(checks))
					got := make([]algorithms.Decision, len(checks))
					werr := mem.Peek(ctx, want, checks)
					gerr := rs.Peek(ctx, got, checks)
					history = append(history, fmt.Sprintf("peek %d at %d: %+v", i, clk.t.UnixNano(), checks))
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%s\npeek errors differ: %v %v", join(history), werr, gerr)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s\npeek check %d: redis %+v\n memory %+v", join(history), j, got[j], want[j])
						}
					}
				case 1:
					if len(admitted) == 0 {
						continue
					}
					j := len(admitted) - 1 - r.IntN(min(len(admitted), 3))
					tk := admitted[j]
					admitted = append(admitted[:j], admitted[j+1:]...)
					waited := clk.t.Sub(tk.at)
					want := make([]algorithms.Refunded, len(tk.checks))
					got := make([]algorithms.Refunded, len(tk.checks))
					werr := mem.GiveBack(ctx, want, tk.checks, tk.ds, waited)
					gerr := rs.GiveBack(ctx, got, tk.checks, tk.ds, waited)
					history = append(history, fmt.Sprintf("giveback %d at %d waited %d: %+v", i, clk.t.UnixNano(), waited, tk.checks))
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%s\ngiveback errors differ: %v %v", join(history), werr, gerr)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s\ngiveback check %d: redis %+v\n memory %+v", join(history), j, got[j], want[j])
						}
					}
				default:
					var before int64
					if calls != nil {
						before = calls.n.Load()
					}
					ds, err := takeAlike(t, mem, rs, clk, &history, i, checks)
					if calls != nil && calls.n.Load() == before {
						answered.Add(1)
					}
					if err == nil {
						all := true
						for _, d := range ds {
							all = all && d.Allowed
						}
						if all {
							admitted = append(admitted, taken{clk.t, checks, ds})
						}
					}
				}
			}
		})
	}
	if answered.Load() == 0 {
		t.Errorf("the deny cache answered no Take of %d seeds: the traces test nothing of it", n)
	}
}

// bigCountSpec returns the Spec of kind at limit per w (sliding_buckets
// in 3 buckets when they divide w, else 1).
func bigCountSpec(kind algorithms.Kind, limit int64, w time.Duration) algorithms.Spec {
	spec := algorithms.Spec{Algorithm: kind, Limit: limit, Window: w}
	if kind == algorithms.SlidingBuckets {
		spec.Buckets = 1
		if int64(w)%3 == 0 {
			spec.Buckets = 3
		}
	}
	return spec
}

// bigCountSteps takes 120 checks of spec on one key, the memory store's
// decisions against Redis's (a client of mk): before each, the clock
// moves by up to a window, by a few ns, or by up to a 50th of a window;
// gen makes the check from a cost-1 one at the Spec's limit, and it goes
// alone or beside judgedPad (main.lua).
func bigCountSteps(t *testing.T, mk func(testing.TB) *redis.Client, spec algorithms.Spec, r *rand.Rand, gen func(algorithms.Check) algorithms.Check) {
	clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	mem, rs := pairedStores(t, mk(t), clk)
	var history []string
	w := spec.Window
	for i := range 120 {
		switch r.IntN(4) {
		case 0:
			clk.t = clk.t.Add(time.Duration(r.Int64N(int64(w))))
		case 1:
			clk.t = clk.t.Add(time.Duration(r.Int64N(3)))
		default:
			clk.t = clk.t.Add(time.Duration(r.Int64N(int64(w)/50 + 1)))
		}
		checks := []algorithms.Check{gen(algorithms.Check{Spec: spec, Key: "k"})}
		if r.IntN(2) == 0 {
			checks = append(checks, judgedPad)
		}
		takeAlike(t, mem, rs, clk, &history, i, checks)
	}
}

// TestJudgedBigCountsMatchMemoryStore takes, on one key of each window
// kind at the bounds (Limit 10^9, Windows up to 24 h, and ones of no
// whole number of ns per second), counts of up to 6·10^8 at the Spec's
// limit and checks judged at 1 to 3, near 10^9, and at random limits, at
// random instants, alone (fast.lua for fixed_window and sliding_window)
// and beside judgedPad (main.lua), through the function library and the
// script fallback, and requires every Decision field to match the memory
// store's: the plain-number steps of a judged check on a count far past
// its limit (doc.go, "Exactness").
func TestJudgedBigCountsMatchMemoryStore(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for ci, mk := range []func(testing.TB) *redis.Client{newClient, noFunctionsClient} {
		for _, w := range []time.Duration{24 * time.Hour, 86399999999, 1000003, 10 * time.Second, time.Millisecond} {
			for _, kind := range []algorithms.Kind{algorithms.SlidingWindow, algorithms.FixedWindow, algorithms.SlidingLog, algorithms.SlidingBuckets} {
				spec := bigCountSpec(kind, 1_000_000_000, w)
				t.Run(fmt.Sprint(ci, kind, w), func(t *testing.T) {
					bigCountSteps(t, mk, spec, r, func(c algorithms.Check) algorithms.Check {
						switch r.IntN(5) {
						case 0:
							c.Cost = 1 + r.Int64N(600_000_000)
						case 1:
							c.Limit = 1 + r.Int64N(3)
						case 2:
							c.Limit = 1_000_000_000 - r.Int64N(3)
							c.Cost = 1 + r.Int64N(c.Limit)
						default:
							c.Limit = 1 + r.Int64N(1_000_000_000)
							c.Cost = 1 + r.Int64N(min(c.Limit, 5))
						}
						return c
					})
				})
			}
		}
	}
}
