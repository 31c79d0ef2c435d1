package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// interleaveMode is a kind of run of TestUndoInterleavings.
type interleaveMode struct {
	name string
	// behind: a reservation's instant may be up to a step before the
	// latest one (its instance read the shared clock first and reached
	// Redis later). Takes and undos are made at the latest instant.
	behind bool
	// between: Takes and give-backs of one key while reservations of it
	// are pending (records dropped); else only when none is.
	between bool
	// exact: the key must be decided exactly as the model's; else (as
	// when requests come between, and for a leaky_queue, whose undo keeps
	// a place some reservation queued behind) with no more Remaining.
	exact bool
}

// TestUndoInterleavings drives the cross-slot phases of lua/cluster.lua
// directly (Store.reserve and Store.undo, as runSplit calls them) on one
// key of each of the kinds that keep records in their value, on a real
// redis-server: random interleavings of reservations, their undos, and
// Takes and give-backs of the key, at random instants. Whenever no
// reservation is pending, the key is compared, by Peeks at several
// instants, with a memory store that saw the Takes, the give-backs and the
// reservations that stood (as Takes, in the order they reached Redis), and
// not the undone ones. With no request between a reservation and its undo
// the undos leave the key exactly as without them, in any order and at any
// instants; with requests between, a window key too (its instants not
// going back), and a bucket key keeps no fewer units than without them.
// On 35b0c16's lua/cluster.lua it fails "requests_between" for the
// bucket kinds at its first seed (TestClusterUndoBucketRecountedBelow),
// and, with REDISSTORE_SEEDS=1000, "clock_behind" for the window kinds
// (TestClusterUndoWindowCountedAgainElsewhere).
func TestUndoInterleavings(t *testing.T) {
	srv := redistest.New(t)
	// ContextTimeoutEnabled: the calls run on the test's goroutine, not on
	// one of the store's (store.go, guard), which is not what this tests.
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer client.Close()
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: time.Minute},
		{Algorithm: algorithms.TokenBucket, Limit: 60, Window: time.Minute, Burst: 1000},
		{Algorithm: algorithms.LeakyBucket, Limit: 60, Window: time.Minute, Burst: 1000},
		{Algorithm: algorithms.LeakyQueue, Limit: 60, Window: time.Minute, MaxDelay: 10 * time.Hour},
	}
	seeds := 60
	if v, err := strconv.Atoi(os.Getenv("REDISSTORE_SEEDS")); err == nil {
		seeds = v
	}
	if testing.Short() {
		seeds = 10
	}
	modes := []interleaveMode{
		{name: "overlapping", behind: true, exact: true},
		{name: "requests_between", between: true},
		{name: "clock_behind", behind: true, between: true},
	}
	for _, mode := range modes {
		for _, sp := range specs {
			t.Run(mode.name+"/"+string(sp.Algorithm), func(t *testing.T) {
				// Steps long enough to cross a window, short enough that a
				// bucket (a unit a second) still owes when the undo comes.
				step := 20 * time.Second
				if !sp.Algorithm.Raisable() {
					step = 3 * time.Second
				}
				exact := mode.exact && sp.Algorithm != algorithms.LeakyQueue ||
					mode.between && !mode.behind && sp.Algorithm.Raisable()
				for seed := range seeds {
					if msg := interleaveRun(t, client, sp, mode, exact, step, uint64(seed)); msg != "" {
						t.Fatalf("seed %d:\n%s", seed, msg)
					}
				}
			})
		}
	}
}

// interleaveEvent is what the model applies: a Take at an instant (a
// reservation that stood, or a Take), or a give-back.
type interleaveEvent struct {
	id     int
	at     time.Time
	checks []algorithms.Check
	give   []algorithms.Decision // a give-back of the Take that decided these
	waited time.Duration
}

type interleavePending struct {
	r  *request
	rv reservation
	ev interleaveEvent
}

// interleaveRun runs one seed; it returns the steps and the difference
// found, or "".
func interleaveRun(t *testing.T, client *redis.Client, sp algorithms.Spec, mode interleaveMode, exact bool, step time.Duration, seed uint64) string {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clk := &manualNow{t: base}
	s, err := New(client, WithClock(clk), WithPrefix(fmt.Sprintf("il-%s-%s-%d", mode.name, sp.Algorithm, seed)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	L := algorithms.Check{Spec: sp, Key: "L"}
	all := func(c []algorithms.Check) []int {
		idx := make([]int, len(c))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	var log []interleaveEvent
	var steps []string
	var pend []*interleavePending
	var give *interleaveEvent // the latest Take decided on a state as the model's
	drift := false            // the key may differ from the model's
	now, latest := time.Duration(0), time.Duration(0)
	for i := range 40 {
		dt := time.Duration(rng.Int64N(int64(step)))
		if rng.IntN(3) == 0 {
			dt = 0
		}
		latest += dt
		now = latest
		if mode.behind && rng.IntN(3) == 0 {
			now = max(latest-time.Duration(rng.Int64N(int64(step))), 0)
		}
		c := L
		c.Cost = 1 + rng.Int64N(3)
		checks := []algorithms.Check{c}
		if rng.IntN(6) == 0 {
			checks = append(checks, L) // the key twice in one Take
		}
		op := rng.IntN(10)
		switch {
		case op < 4 || op < 7 && len(pend) == 0:
			clk.t = base.Add(now)
			r := s.newRequest(checks, clk.t)
			dst := make([]algorithms.Decision, len(checks))
			rv := s.reserve(ctx, r, all(checks), dst)
			if rv.err != nil {
				t.Fatal(rv.err)
			}
			what := fmt.Sprintf("+%v reserve %v", now, costsOf(checks))
			if !rv.admitted {
				steps = append(steps, what+" (denied)")
				continue
			}
			p := &interleavePending{r: r, rv: rv, ev: interleaveEvent{id: i, at: clk.t, checks: checks}}
			log = append(log, p.ev)
			pend = append(pend, p)
			steps = append(steps, fmt.Sprintf("%s (R%d)", what, i))
		case op < 7:
			k := rng.IntN(len(pend))
			if rng.IntN(2) == 0 {
				k = 0 // the oldest: its undo counts the newer ones again
			}
			p := pend[k]
			pend = slices.Delete(pend, k, k+1)
			if rng.IntN(5) == 0 {
				steps = append(steps, fmt.Sprintf("R%d stands", p.ev.id))
				continue
			}
			clk.t = base.Add(latest)
			if err := s.undo(ctx, p.r, all(p.ev.checks), p.rv, make([]algorithms.Decision, len(p.ev.checks))); err != nil {
				t.Fatal(err)
			}
			log = slices.DeleteFunc(log, func(e interleaveEvent) bool { return e.id == p.ev.id && e.give == nil })
			steps = append(steps, fmt.Sprintf("+%v undo R%d", latest, p.ev.id))
		default:
			if !mode.between && len(pend) > 0 {
				continue
			}
			if len(pend) > 0 && !exact {
				drift = true
			}
			clk.t = base.Add(latest)
			if give != nil && rng.IntN(2) == 0 {
				got := make([]algorithms.Refunded, len(give.checks))
				waited := clk.t.Sub(give.at)
				if err := s.GiveBack(ctx, got, give.checks, give.give, waited); err != nil {
					t.Fatal(err)
				}
				log = append(log, interleaveEvent{at: clk.t, checks: give.checks, give: give.give, waited: waited})
				steps = append(steps, fmt.Sprintf("+%v give back the Take at +%v", latest, give.at.Sub(base)))
				give = nil
				break
			}
			ds, err := s.Take(ctx, checks...)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("+%v take %v", latest, costsOf(checks))
			if !ds[0].Allowed || !ds[len(ds)-1].Allowed {
				steps = append(steps, what+" (denied)")
				break
			}
			log = append(log, interleaveEvent{id: -1, at: clk.t, checks: checks})
			give = nil
			if len(pend) == 0 && !drift && sp.Algorithm != algorithms.LeakyQueue {
				give = &interleaveEvent{at: clk.t, checks: checks, give: ds}
			}
			steps = append(steps, what)
		}
		if len(pend) > 0 {
			continue
		}
		if msg := interleaveCompare(t, s, client, L, log, base, latest, exact); msg != "" {
			return strings.Join(steps, "\n") + "\n" + msg
		}
	}
	return ""
}

// manualNow is a clock the test sets.
type manualNow struct{ t time.Time }

func (c *manualNow) Now() time.Time { return c.t }

func costsOf(cs []algorithms.Check) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, max(c.Cost, 1))
	}
	return out
}

// interleaveCompare replays log on a memory store and compares Peeks of L
// on both at instants around latest: equal when exact, else with no more
// Remaining on s.
func interleaveCompare(t *testing.T, s *Store, client *redis.Client, L algorithms.Check, log []interleaveEvent, base time.Time, latest time.Duration, exact bool) string {
	ctx := context.Background()
	mclk := &manualNow{}
	m, err := algorithms.NewMemoryStore(algorithms.WithClock(mclk))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		mclk.t = e.at
		if e.give != nil {
			if err := m.GiveBack(ctx, make([]algorithms.Refunded, len(e.checks)), e.checks, e.give, e.waited); err != nil {
				t.Fatal(err)
			}
			continue
		}
		ds, err := m.Take(ctx, e.checks...)
		if err != nil {
			t.Fatal(err)
		}
		if !ds[0].Allowed || !ds[len(ds)-1].Allowed {
			return fmt.Sprintf("the model denies the Take at +%v", e.at.Sub(base))
		}
	}
	clk := s.clock.(*manualNow)
	k, _ := s.redisKey(L.Key, s.specs.get(L.Spec, 0))
	v, _ := client.Get(ctx, k).Result()
	for _, off := range []time.Duration{0, -30 * time.Second, 500 * time.Millisecond, 20 * time.Second, 61 * time.Second} {
		at := base.Add(latest + off)
		clk.t, mclk.t = at, at
		got, want := make([]algorithms.Decision, 1), make([]algorithms.Decision, 1)
		if err := s.Peek(ctx, got, []algorithms.Check{L}); err != nil {
			return "Peek: " + err.Error()
		}
		if err := m.Peek(ctx, want, []algorithms.Check{L}); err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] && (exact || got[0].Remaining > want[0].Remaining) {
			return fmt.Sprintf("Peek at +%v:\n\tredis %+v\n\tmodel %+v\nvalue %q", latest+off, got[0], want[0], v)
		}
	}
	return ""
}
