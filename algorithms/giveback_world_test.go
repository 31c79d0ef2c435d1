package algorithms_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// gbStep is one step of a random give-back trace: a Take of cost at
// instant at, or (give >= 0) the give-back at at of the Take of step give,
// its waited exact (at less that Take's instant).
type gbStep struct {
	at   int64
	cost int64
	give int
}

func (s gbStep) String(t0 int64) string {
	at := time.Duration(s.at - t0)
	if s.give >= 0 {
		return fmt.Sprintf("give back #%d at %v", s.give, at)
	}
	return fmt.Sprintf("take %d at %v", s.cost, at)
}

// gbWorld replays the Takes of steps for which keep reports true, in
// order, on a fresh store, up to and including step last, and returns the
// decision of step last. ok is false when a kept Take before last is
// denied there: the world is not the one in which the other requests were
// admitted as they were.
func gbWorld(t *testing.T, sp algorithms.Spec, steps []gbStep, last int, keep func(int) bool) (d algorithms.Decision, ok bool) {
	t.Helper()
	var now int64
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return time.Unix(0, now) })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := 0; i <= last; i++ {
		if steps[i].give >= 0 || (i < last && !keep(i)) {
			continue
		}
		now = steps[i].at
		ds, err := s.Take(ctx, algorithms.Check{Spec: sp, Key: "k", Cost: steps[i].cost})
		if err != nil {
			t.Fatal(err)
		}
		if i == last {
			return ds[0], true
		}
		if !ds[0].Allowed {
			return ds[0], false
		}
	}
	return algorithms.Decision{}, false
}

// gbSeeds returns how many random traces TestGiveBacksInAnyOrderNeverAdmitMore
// replays a kind: n, or RATEKEEPER_GIVEBACK_SEEDS when set.
func gbSeeds(n int) int {
	if v, err := strconv.Atoi(os.Getenv("RATEKEEPER_GIVEBACK_SEEDS")); err == nil && v > 0 {
		return v
	}
	return n
}

// TestGiveBacksInAnyOrderNeverAdmitMore replays random short traces of Takes and
// GiveBacks (each waited exact or early, on one clock that may step back) of one
// key of a small Spec of each counting and bucket kind on the
// MemoryStore, and requires every Take after a give-back that the store
// admits to be admitted in one of two worlds, each replayed on a fresh
// store with the requests the store admitted counted as they were: the
// world without the Takes given back so far, or the world in which they
// were never given back. (For the buckets and the window counters the
// world without them admits at least what the other does, so this is
// GiveBack's promise: never admit what the world without the given-back
// Takes denies. With a clock behind, though, a sliding_log decides a request at an instant
// behind its newest one at that newest instant, in a window from which
// the newest Take forgot the requests that had left it: a Take that
// stands may make the key admit such a request that the world without it
// denies, and no give-back can make the key admit less than that.) The
// traces that break it are printed. The monotone traces never step the
// clock back (monotone_early has half the give-backs reckoned early, their
// waited long by up to three twelfths of the window, as a caller that
// reads its clock before its Take: giving back less, or older units); the
// clock_behind ones do, and break it in every kind (a
// known defect, run only with RATEKEEPER_KNOWN_DEFECTS=1: see
// GiveBacker.GiveBack). RATEKEEPER_GIVEBACK_SEEDS sets the number of
// traces a kind (default 3000). The monotone traces always run, the
// buckets' too: an older Take given back after a younger one's Take leaves
// the younger one's decision reckoning its units further back than they
// stand, and the key's note of its latest give-back has the younger one's
// give-back reckon them no further back than they may stand (see
// GiveBacker.GiveBack; without it 5, 4, 3, 1 and 1 of the 3000 bucket
// traces broke it).
func TestGiveBacksInAnyOrderNeverAdmitMore(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 60 * time.Second, Burst: 4},
		{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: 60 * time.Second, Burst: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 4, Window: 60 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 4, Window: 60 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 3, Window: 60 * time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 3, Window: 60 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: 60 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 3, Window: 60 * time.Second, Buckets: 3},
	}
	seeds := gbSeeds(3000)
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC).UnixNano()
	for _, sp := range specs {
		t.Run(sp.String(), func(t *testing.T) {
			for _, mode := range []string{"monotone", "monotone_early", "clock_behind"} {
				behind, early := mode == "clock_behind", mode == "monotone_early"
				name := mode
				t.Run(name, func(t *testing.T) {
					if behind && os.Getenv("RATEKEEPER_KNOWN_DEFECTS") == "" {
						t.Skip("known defect (see GiveBacker.GiveBack, \"Left\"): with a clock that goes back a give-back leaves the key where the Take moved it, having forgotten what left its window (the window kinds), or reckons the Take's refill up to now rather than the key's latest instant (the buckets); set RATEKEEPER_KNOWN_DEFECTS=1 to run")
					}
					failures := 0
					for seed := range seeds {
						r := rand.New(rand.NewPCG(uint64(seed), 0x61be))
						if msg := gbTrace(t, r, sp, t0, behind, early); msg != "" {
							failures++
							if failures <= 3 {
								t.Errorf("seed %d: %s", seed, msg)
							}
						}
					}
					if failures > 0 {
						t.Errorf("%d of %d traces admit what neither world admits", failures, seeds)
					}
				})
			}
		})
	}
}

// gbTrace replays one random trace on sp and returns a description of the
// first Take it admits that neither world admits, or "".
func gbTrace(t *testing.T, r *rand.Rand, sp algorithms.Spec, t0 int64, behind, early bool) string {
	now := t0
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return time.Unix(0, now) })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	quantum := int64(sp.Window) / 12
	var steps []gbStep
	var ds []algorithms.Decision
	givenAt := map[int]int{} // Take step -> give-back step
	var open []int           // admitted Takes not given back
	for i := 0; i < 10; i++ {
		switch r.IntN(6) {
		case 0: // the same instant
		case 1: // a clock behind
			if behind {
				now -= quantum * int64(1+r.IntN(8))
			}
		default:
			now += quantum * int64(1+r.IntN(8))
		}
		if len(open) > 0 && r.IntN(3) == 0 {
			j := open[r.IntN(len(open))]
			if steps[j].at <= now {
				for k, o := range open {
					if o == j {
						open = append(open[:k], open[k+1:]...)
						break
					}
				}
				givenAt[j] = len(steps)
				steps = append(steps, gbStep{at: now, give: j})
				ds = append(ds, algorithms.Decision{})
				dst := make([]algorithms.Refunded, 1)
				c := algorithms.Check{Spec: sp, Key: "k", Cost: steps[j].cost}
				waited := now - steps[j].at
				if early && r.IntN(2) == 0 {
					waited += r.Int64N(3 * quantum) // the caller's clock read before its Take
				}
				if err := s.GiveBack(ctx, dst, []algorithms.Check{c}, []algorithms.Decision{ds[j]}, time.Duration(waited)); err != nil {
					t.Fatal(err)
				}
				continue
			}
		}
		cost := 1 + r.Int64N(min(3, sp.Capacity()))
		got, err := s.Take(ctx, algorithms.Check{Spec: sp, Key: "k", Cost: cost})
		if err != nil {
			t.Fatal(err)
		}
		i := len(steps)
		steps = append(steps, gbStep{at: now, cost: cost, give: -1})
		ds = append(ds, got[0])
		if !got[0].Allowed {
			continue
		}
		open = append(open, i)
		if len(givenAt) == 0 {
			continue
		}
		// The world without the Takes given back before step i.
		without := func(j int) bool {
			g, given := givenAt[j]
			return ds[j].Allowed && !(given && g < i)
		}
		kept := func(j int) bool { return ds[j].Allowed }
		w, wok := gbWorld(t, sp, steps, i, without)
		k, kok := gbWorld(t, sp, steps, i, kept)
		if (wok && !w.Allowed) && (!kok || !k.Allowed) {
			var b strings.Builder
			for _, st := range steps {
				b.WriteString(st.String(t0))
				b.WriteString("; ")
			}
			return fmt.Sprintf("%s: the last Take is admitted (%+v); the world without the given-back Takes denies it (%+v), as does the one in which they stand (%+v, replayed as admitted: %v)", b.String(), got[0], w, k, kok)
		}
	}
	return ""
}

// TestSlidingLogStandingTakeAdmitsMoreBehindItsClock pins why GiveBack's
// promise cannot hold for a request at an instant behind the key's latest
// (GiveBacker.GiveBack, "Left"): sliding_log, 4 a minute, 1 at 0 s, 1 s,
// 10 s and 62 s (which forgets 0 s and 1 s), then 2 at 40 s (a clock
// behind) is admitted, decided at 62 s on 10 s and 62 s; without the Take
// at 62 s it is decided at 40 s, on 0 s, 1 s and 10 s, and denied. A
// Take that stands makes the key admit more there than the world without
// it, so no give-back of it can make the key admit no more than that.
func TestSlidingLogStandingTakeAdmitsMoreBehindItsClock(t *testing.T) {
	sp := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute}
	run := func(at ...time.Duration) algorithms.Decision {
		var now time.Time
		s, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
		for _, a := range at {
			now = t0.Add(a)
			if d, err := s.TakeOne(context.Background(), algorithms.Check{Spec: sp, Key: "k", Cost: 1}); err != nil || !d.Allowed {
				t.Fatalf("1 at %v: %+v, %v; want admitted", a, d, err)
			}
		}
		now = t0.Add(40 * time.Second)
		d, err := s.TakeOne(context.Background(), algorithms.Check{Spec: sp, Key: "k", Cost: 2})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	s := time.Second
	if d := run(0, s, 10*s, 62*s); !d.Allowed {
		t.Errorf("with the Take at 62 s, 2 at 40 s: %+v; want admitted (decided at 62 s)", d)
	}
	if d := run(0, s, 10*s); d.Allowed {
		t.Errorf("without the Take at 62 s, 2 at 40 s: %+v; want denied (decided at 40 s)", d)
	}
}
