package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// undoStateSpecs are the kinds whose state a request at a later instant
// moves on: a sliding_log prunes, a sliding_buckets ring rolls. 4 a minute.
var undoStateSpecs = []algorithms.Spec{
	{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: time.Minute, Buckets: 6},
}

// modelRun runs Takes on the cluster at an injected clock and compares each
// with algotest's Model at the same instant, in the order they run, as the
// conformance suite does.
type modelRun struct {
	t     *testing.T
	base  time.Time
	clk   *manualClock
	mu    sync.Mutex // the race runs inside a Take
	model *algotest.Model
	steps []string
}

func newModelRun(t *testing.T) *modelRun {
	base := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	return &modelRun{t: t, base: base, clk: &manualClock{t: base}, model: algotest.NewModel()}
}

// compare decides checks on the model at the clock's instant and returns a
// description of any difference from got (only of Allowed when loose: a
// request between a reservation and its undo sees the reserved units, the
// model does not).
func (m *modelRun) compare(who string, got []algorithms.Decision, err error, loose bool, checks ...algorithms.Check) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for _, c := range checks {
		names = append(names, fmt.Sprintf("%s cost %d", c.Key, max(c.Cost, 1)))
	}
	m.steps = append(m.steps, fmt.Sprintf("+%v %s: Take(%s)", m.clk.t.Sub(m.base), who, strings.Join(names, ", ")))
	want, merr := m.model.TakeAt(m.clk.t, checks...)
	if err != nil || merr != nil {
		return fmt.Sprintf("%s\nerrors: redis %v, model %v", strings.Join(m.steps, "\n"), err, merr)
	}
	for j := range want {
		if got[j] != want[j] && (!loose || got[j].Allowed != want[j].Allowed) {
			return fmt.Sprintf("%s\ncheck %d (%s):\n\tredis %+v\n\tmodel %+v", strings.Join(m.steps, "\n"), j, checks[j].Key, got[j], want[j])
		}
	}
	return ""
}

// taker returns a Take of checks on s at base+at (setting the run's
// clock), as who; it fails the test on any difference from the model.
func (m *modelRun) taker(s *redisstore.Store, who string) func(at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
	return func(at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
		m.t.Helper()
		m.clk.t = m.base.Add(at)
		d, err := s.Take(context.Background(), checks...)
		if diff := m.compare(who, d, err, false, checks...); diff != "" {
			m.t.Fatal(diff)
		}
		return d
	}
}

// giveBack gives back, on s at the run's clock, the Take of checks that
// decided ds (what, in the steps), and fails the test unless the model's
// give-back returns the same.
func (m *modelRun) giveBack(s *redisstore.Store, who, what string, checks []algorithms.Check, ds []algorithms.Decision) {
	m.t.Helper()
	got := make([]algorithms.Refunded, len(checks))
	gerr := s.GiveBack(context.Background(), got, checks, ds, 0)
	want, merr := m.model.GiveBackAt(m.clk.t, checks, ds, 0)
	m.steps = append(m.steps, fmt.Sprintf("+%v %s: GiveBack of %s", m.clk.t.Sub(m.base), who, what))
	if gerr != nil || merr != nil || !slices.Equal(got, want) {
		m.t.Fatalf("%s\nredis %+v, %v\nmodel %+v, %v", strings.Join(m.steps, "\n"), got, gerr, want, merr)
	}
}

// goesOnAsModel: the Takes of L (4 or 6 a minute, holding what the
// model's holds, at +61.001 s or earlier) after which the undo tests check
// that L goes on as the model's, each compared by take.
func goesOnAsModel(take func(time.Duration, ...algorithms.Check) []algorithms.Decision, L algorithms.Check) {
	two := L
	two.Cost = 2
	take(61*time.Second+time.Millisecond, L)
	take(61*time.Second+time.Millisecond, two)
	take(92*time.Second, two)
	take(95*time.Second, L)
}

// TestClusterUndoLeavesLogAndRingAsBefore: a sliding_log or sliding_buckets
// key L (4 a minute) holds 2 units taken at +1 s and 2 at +31 s. At
// +61.001 s a cross-slot Take of L (cost 1: admitted alone, the +1 s units
// having left the window) and y reserves L, loses the race for y's one
// unit, and is undone: a denied Take, which must neither prune L's log nor
// roll its ring. So a Take of L at +31 s (a clock behind, or read before
// the cross-slot Take) still counts the +1 s units and is denied. An undo
// that takes back the reserved unit but leaves the log pruned (the ring
// rolled) at the reservation's instant admits it: 5 units in a minute.
//
// In the "taken between" runs another instance takes a unit of L at
// +61.001 s between the reservation and the undo: a request that counts,
// which forgets the +1 s units in any world. The undo then takes the
// reserved unit back from L as it finds it, and L goes on as the model's
// (the Take at +31 s is admitted, decided at +61.001 s).
//
// In the "all_left" runs L holds only a unit at each of +0.5 s, +1 s and
// +1.5 s, all of which the reservation forgets (the whole list, the whole
// ring), and the Take at +31 s costs 2 (its RetryAfter reads the events in
// order).
//
// Every call is compared with algotest's Model, the racing Take of y
// included.
func TestClusterUndoLeavesLogAndRingAsBefore(t *testing.T) {
	for _, sp := range undoStateSpecs {
		for _, run := range []string{"", "taken_between", "all_left"} {
			between, allLeft := run == "taken_between", run == "all_left"
			name := string(sp.Algorithm)
			if run != "" {
				name += "/" + run
			}
			t.Run(name, func(t *testing.T) {
				u := newUndoRun(t, sp)
				m, prefix, other, L := u.m, u.prefix, u.other, u.L
				ctx := context.Background()
				y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
				// Between the peek and the reservation, another instance takes
				// y's one unit: y's slot denies, and L's reservation is undone.
				race := u.lose(t, y)
				client := sharedCluster(t)
				client.AddHook(race)
				undos := &undoRecorder{prefix: prefix}
				client.AddHook(undos)
				var taken bool
				if between {
					client.AddHook(&callModeHook{mode: "2", key: redisKeys(prefix, L)[0], do: func() {
						d, err := other.Take(ctx, L)
						if diff := m.compare("other", d, err, true, L); diff != "" {
							t.Error(diff)
						}
						taken = true
					}})
				}
				s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				take := m.taker(s, "s")
				two := L
				two.Cost = 2
				probe := L
				if allLeft {
					take(500*time.Millisecond, L)
					take(time.Second, L)
					take(1500*time.Millisecond, L)
					probe.Cost = 2
				} else {
					take(time.Second, two)
					take(31*time.Second, two)
				}
				d := take(61*time.Second+time.Millisecond, L, y)
				if !race.hit.Load() || len(undos.keys()) != 1 || taken != between || !d[0].Allowed || d[1].Allowed {
					t.Fatalf("Take(L, y) at +61.001s = %+v (race run %v, undo calls %v, L taken between %v); want L passing, y denied after the race, L's reservation undone",
						d, race.hit.Load(), undos.keys(), taken)
				}
				if d := take(31*time.Second, probe); d[0].Allowed == !between {
					t.Fatalf("Take(L cost %d) at +31s after the undone cross-slot Take = %+v; want Allowed %v", probe.Cost, d, between)
				}
				goesOnAsModel(take, L)
			})
		}
	}
}

// TestClusterStandingReservationForgets: a cross-slot Take of L (as
// above: 2 units at +1 s, 2 at +31 s) and y at +61.001 s is admitted, its
// reservations standing: L counted a request, so it forgets the +1 s
// units, as an admitted Take does. The Take's units are then given back:
// L holds the +31 s units only, and a Take of L at +31 s (decided at its
// newest event, +31 s) is admitted. A reservation that kept the events it
// forgot listed (for its undo to leave the log as it was) would have them
// counted again once the give-back removed its newer event.
func TestClusterStandingReservationForgets(t *testing.T) {
	for _, sp := range undoStateSpecs {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			m := newModelRun(t)
			prefix := uniquePrefix(t)
			s, err := redisstore.New(sharedCluster(t), redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			L := algorithms.Check{Spec: sp, Key: "user-1"}
			y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "route-/login"}
			take := m.taker(s, "s")
			two := L
			two.Cost = 2
			take(time.Second, two)
			take(31*time.Second, two)
			crossed := []algorithms.Check{L, y}
			ds := take(61*time.Second+time.Millisecond, crossed...)
			if !ds[0].Allowed || !ds[1].Allowed {
				t.Fatalf("Take(L, y) at +61.001s = %+v, want both admitted", ds)
			}
			m.giveBack(s, "s", "that Take", crossed, ds)
			if d := take(31*time.Second, L); !d[0].Allowed {
				t.Fatalf("Take(L) at +31s after the given-back cross-slot Take = %+v; want admitted", d)
			}
			take(61*time.Second+time.Millisecond, two)
		})
	}
}
