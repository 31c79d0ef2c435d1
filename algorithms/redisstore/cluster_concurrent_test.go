package redisstore_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// atomicClock is an injected clock a goroutine sets before each of its
// Takes (read by the store's own goroutines too, hence atomic).
type atomicClock struct{ ns atomic.Int64 }

func (c *atomicClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// modeCountHook counts the script calls in each mode ("0" plain or peek,
// "1" reserve, "2" undo: the argument after the two instant words).
type modeCountHook struct {
	redistest.PassHooks
	reserves, undos atomic.Int64
}

func (h *modeCountHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch mode, _, _ := scriptCall(cmd); mode {
		case "1":
			h.reserves.Add(1)
		case "2":
			h.undos.Add(1)
		}
		return next(ctx, cmd)
	}
}

// concTake is an admitted Take's check of the hot key, made in round by
// goroutine g.
type concTake struct {
	redisstore.AdmittedTake
	round, g int
	d        algorithms.Decision
}

// concSpecs are the hot key's specs of TestClusterConcurrentCrossSlotTakes:
// every kind, 12 units a second (capacity 18 for the buckets).
var concSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 12, Window: time.Second},
	{Algorithm: algorithms.SlidingLog, Limit: 12, Window: time.Second},
	{Algorithm: algorithms.SlidingWindow, Limit: 12, Window: time.Second},
	{Algorithm: algorithms.SlidingBuckets, Limit: 12, Window: time.Second, Buckets: 4},
	{Algorithm: algorithms.TokenBucket, Limit: 12, Window: time.Second, Burst: 18},
	{Algorithm: algorithms.LeakyBucket, Limit: 12, Window: time.Second, Burst: 18},
	{Algorithm: algorithms.LeakyQueue, Limit: 12, Window: time.Second, MaxDelay: 500 * time.Millisecond},
}

// TestClusterConcurrentCrossSlotTakes: 32 goroutines, each with a store of
// its own (16 on each of two cluster clients) and a clock of its own, make
// Takes of one hot key L (user-1, 12 a second) of each kind, most of them
// cross-slot, in rounds of one Take each. Half the rounds are races: every
// Take names L and two fresh keys on two other slots with one unit each,
// so that most pass the peek, few win both, and up to 32 reservations of
// L overlap and are undone in whatever order the scheduler gives. In the
// others a Take names L alone (1 in 8) or with one or two fixed windows of
// 2 units in 100 ms. The test sets the clocks between rounds, never during
// one: the round's instant advances up to 400 ms, stays, or goes back up to
// 900 ms. For the window kinds half the goroutines of a non-race round are
// behind it by up to 900 ms (a clock behind, which counts what a
// reservation at a later instant forgot and its undo must put back); for
// the bucket kinds every clock reads the round's instant (with an injected
// clock a bucket undo is exact only when no request at a later instant
// comes between the reservation and the undo: doc.go, "Cluster").
//
// Whatever the interleaving, a correct store admits on L only what the
// kind allows:
//
//   - the window kinds: each admitted Take of L was decided at an instant
//     te >= its own (the key's latest, for a clock behind), read from its
//     ResetAfter (te + W + 1 ns for a log; the end of its window, of the
//     next for sliding_window, or of the ring for the buckets), never after
//     the latest instant of any Take made so far; then the units in any
//     fixed window, in any closed interval of length W (sliding_log), in
//     any B consecutive sub-windows (sliding_buckets) are at most L, and a
//     sliding_window's previous count P and the units of its window k
//     decided at offsets up to x (S_x) satisfy P·(W−x) + S_x·W <= L·W;
//   - token_bucket, leaky_bucket: the units admitted at instants in [a, b]
//     are at most the capacity plus (b−a)·L/W, for the clock set back too
//     (an earlier instant is a larger deficit);
//   - leaky_queue: at most (b−a+MaxDelay)·L/W plus the largest cost;
//
// and algotest's Model, given the admitted Takes in a serial order (the
// window kinds at their te, in order of te; the buckets round by round, at
// the round's instant), admits every one of them. No Take errs, every key
// left under the prefix (the side keys ":u" included) has an expiry, a
// Peek of L at the latest instant answers as the Model after that replay
// (the bucket kinds with no more Remaining: see below), and once the key
// is idle a Take of L, and one of L with a fresh key on another slot,
// answer as the Model's.
//
// With the side keys of da721fd taken out (its parent's cluster.go,
// keys.go, lua/cluster.lua and lua/main.lua) the sliding_log run fails in
// most runs ("L admitted more than sliding_log allows: 15 units decided in
// [...]"); the sliding_buckets run did not, in the runs tried: the
// sequential tests with hooks (cluster_overlap_test.go) guard that one.
//
// Each run logs its seed; RATEKEEPER_CONC_SEED=<seed> runs that one again
// (the same plans: the interleaving is the scheduler's).
func TestClusterConcurrentCrossSlotTakes(t *testing.T) {
	for _, sp := range concSpecs {
		t.Run(string(sp.Algorithm), func(t *testing.T) { concRun(t, sp) })
	}
}

func concRun(t *testing.T, sp algorithms.Spec) {
	const (
		clients = 2
		perCli  = 16
		step    = 400 * time.Millisecond // the most a round advances the time
		back    = 900 * time.Millisecond // the most a round sets it back
		behind  = 900 * time.Millisecond // the most a window kind's clock is behind
	)
	rounds := 200
	if testing.Short() {
		rounds = 40 // a smaller sample: -short runs a fifth of the rounds
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("RATEKEEPER_CONC_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RATEKEEPER_CONC_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d", seed)
	ctx := context.Background()
	prefix := uniquePrefix(t)
	hook := &modeCountHook{}
	window := redisstore.WindowKind(sp.Algorithm)

	L := algorithms.Check{Spec: sp, Key: "user-1"}
	ySpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: 100 * time.Millisecond}
	var ys []algorithms.Check
	for _, k := range []string{"user-2", "user-4", "ip-1", "route-/login"} {
		ys = append(ys, algorithms.Check{Spec: ySpec, Key: k})
	}

	n := clients * perCli
	stores := make([]*redisstore.Store, n)
	clocks := make([]*atomicClock, n)
	var ccs []*redis.ClusterClient
	for c := range clients {
		cc := sharedCluster(t)
		cc.AddHook(hook)
		ccs = append(ccs, cc)
		for i := range perCli {
			g := c*perCli + i
			clocks[g] = &atomicClock{}
			// The timeout is a failure bound: 32 concurrent cross-slot
			// Takes under -race on a loaded machine outlasted the default
			// 2s (42 of a run's Takes failed so).
			s, err := redisstore.New(cc, redisstore.WithClock(clocks[g]), redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
			if err != nil {
				t.Fatal(err)
			}
			stores[g] = s
		}
	}

	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano()
	base := t0
	rng := rand.New(rand.NewPCG(seed, 1))
	var (
		mu       sync.Mutex
		admitted []concTake
		errs     []string
	)
	maxIssued := make([]int64, rounds) // the latest instant of rounds <= r
	roundAt := make([]int64, rounds)
	latest := int64(0)
	for r := range rounds {
		switch x := rng.IntN(10); {
		case x == 0 && r > 0:
			base -= rng.Int64N(int64(back)) + 1 // set back
		case x < 3:
			// the same instant
		default:
			base += rng.Int64N(int64(step))
		}
		roundAt[r] = base
		// A race round: every Take names L and two keys on other slots
		// with one unit each, fresh: most pass the peek and few win both.
		race := rng.IntN(2) == 0
		var contested []algorithms.Check
		if race {
			for _, k := range []string{"user-2", "user-4"} {
				contested = append(contested, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour + time.Duration(r)}, Key: k})
			}
		}
		// Each goroutine's instant and Take, chosen here.
		type plan struct {
			at     int64
			checks []algorithms.Check
		}
		plans := make([]plan, n)
		for g := range n {
			at := base
			if window && !race && rng.IntN(2) == 0 {
				at -= rng.Int64N(int64(behind))
			}
			l := L
			l.Cost = 1 + rng.Int64N(3)
			checks := []algorithms.Check{l}
			switch {
			case race:
				checks = append(checks, contested...)
			case rng.IntN(8) != 0: // cross-slot: one or two other keys
				for _, i := range rng.Perm(len(ys))[:1+rng.IntN(2)] {
					checks = append(checks, ys[i])
				}
			}
			plans[g] = plan{at, checks}
			latest = max(latest, at)
		}
		maxIssued[r] = latest
		var wg sync.WaitGroup
		for g := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := plans[g]
				clocks[g].ns.Store(p.at)
				d, err := stores[g].Take(ctx, p.checks...)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Sprintf("round %d goroutine %d: %v", r, g, err))
					return
				}
				if allAllowed(d) {
					admitted = append(admitted, concTake{AdmittedTake: redisstore.AdmittedTake{T: p.at, Cost: p.checks[0].Cost}, round: r, g: g, d: d[0]})
				}
			}()
		}
		wg.Wait()
	}
	if len(errs) > 0 {
		t.Fatalf("%d Takes failed, the first: %s", len(errs), errs[0])
	}
	t.Logf("%d rounds of %d Takes: %d admitted on L, %d reservations, %d undos", rounds, n, len(admitted), hook.reserves.Load(), hook.undos.Load())
	if hook.undos.Load() == 0 {
		t.Fatal("no reservation was undone: the test exercised nothing")
	}

	// Every Take decided at te, within what the Takes made so far know.
	for i := range admitted {
		a := &admitted[i]
		te, err := redisstore.EffectiveInstant(sp, a.T, a.d)
		if err == nil && (te < a.T || te > maxIssued[a.round]) {
			err = fmt.Errorf("decided at %d, want between its instant %d and the latest so far %d", te, a.T, maxIssued[a.round])
		}
		if err != nil {
			t.Fatalf("round %d goroutine %d: Take(L cost %d) = %+v: %v", a.round, a.g, a.Cost, a.d, err)
		}
		a.TE = te
	}
	bounded := make([]redisstore.AdmittedTake, len(admitted))
	for i, a := range admitted {
		bounded[i] = a.AdmittedTake
	}
	if msg := redisstore.AdmittedBound(sp, bounded); msg != "" {
		t.Fatalf("seed %d: L admitted more than %s allows: %s", seed, sp.Algorithm, msg)
	}

	// The Model admits them all, serialised.
	order := slices.Clone(admitted)
	if window {
		slices.SortStableFunc(order, func(a, b concTake) int {
			if a.TE != b.TE {
				return cmp.Compare(a.TE, b.TE)
			}
			return cmp.Compare(a.round, b.round)
		})
	} else {
		// Round by round, at the round's instant; within one, the costliest
		// last (a queue admits a request at any backlog up to MaxDelay's:
		// in another order it may have taken the last place first).
		slices.SortStableFunc(order, func(a, b concTake) int {
			if a.round != b.round {
				return cmp.Compare(a.round, b.round)
			}
			return cmp.Compare(a.Cost, b.Cost)
		})
	}
	model := algotest.NewModel()
	for _, a := range order {
		at := a.TE
		if !window {
			at = roundAt[a.round]
		}
		l := L
		l.Cost = a.Cost
		d, err := model.TakeAt(time.Unix(0, at), l)
		if err != nil || !d[0].Allowed {
			t.Fatalf("seed %d: the Model, given the admitted Takes in order, denies round %d goroutine %d's Take(L cost %d) at %v: %+v, %v",
				seed, a.round, a.g, a.Cost, time.Duration(at-t0), d, err)
		}
	}

	// Peek at the latest instant: as the Model after the replay.
	end := latest
	if !window {
		end = roundAt[rounds-1]
	}
	peekL := func(at int64) algorithms.Decision {
		t.Helper()
		clocks[0].ns.Store(at)
		got := make([]algorithms.Decision, 1)
		if err := stores[0].Peek(ctx, got, []algorithms.Check{L}); err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	got := peekL(end)
	want, err := model.PeekAt(time.Unix(0, end), L)
	if err != nil {
		t.Fatal(err)
	}
	if !window {
		// A bucket's undo that subtracts leaves its instant at
		// max(F0, t), not F0 (two reservations at t of a key full at
		// F0 < t, undone in the order they were made): the same at t and
		// later, a deficit at an earlier instant. A queue's keeps a place.
		if got.Remaining > want[0].Remaining {
			t.Fatalf("Peek(L) at the end = %+v, the Model's %+v: more Remaining", got, want[0])
		}
	} else if got != want[0] {
		t.Fatalf("Peek(L) at the end = %+v, want the Model's %+v", got, want[0])
	}

	// Every key has an expiry.
	keys := keysUnder(t, ccs[0], prefix)
	sides := 0
	for _, k := range keys {
		if strings.HasSuffix(k, ":u") {
			sides++
		}
		if pttl := ccs[0].PTTL(ctx, k).Val(); pttl <= 0 {
			t.Fatalf("key %s has PTTL %v, want an expiry", k, pttl)
		}
	}
	t.Logf("%d keys left, %d side keys", len(keys), sides)

	// Idle: the key as the Model's, fresh.
	idle := latest + int64(5*sp.Window)
	take := func(checks ...algorithms.Check) {
		t.Helper()
		clocks[0].ns.Store(idle)
		got, err := stores[0].Take(ctx, checks...)
		want, merr := model.TakeAt(time.Unix(0, idle), checks...)
		if err != nil || merr != nil || !slices.Equal(got, want) {
			t.Fatalf("idle: Take(%v) = %+v, %v; the Model's %+v, %v", checks, got, err, want, merr)
		}
	}
	take(L)
	take(L, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "ip-1"})
}

// allAllowed reports whether a Take of decisions ds was admitted (each
// check of a denied one reports whether it would pass alone).
func allAllowed(ds []algorithms.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}
