package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// The tests here make a cross-slot Take's undo find its record gone from
// its key after an overlapping reservation below it was undone: the
// undo's own record (the reply of its reservation) then tells what the
// reservation did as it was before that undo counted the others again,
// or took units back from under it.

// steppedClock is a clock a test moves while a store may read it.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *steppedClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// stalePlan is one of two cross-slot Takes of L and y_i: its instant, its
// cost on L, and the instant its instance's clock reads when the undo is
// made (the undo's instant u, which a bucket kind's undo compares).
type stalePlan struct {
	at, undoAt time.Duration
	cost       int64
}

// staleRun: two cross-slot Takes T1 and T2 of L (spec sp) and y_i, each on
// a clock of its own, both losing the race for y_i. T2 reserves L after
// T1 and before T1's undo, which then runs; another instance then takes
// between units of L at +betweenAt (a request counted in L: it writes L's
// state alone, dropping T2's record); then T2's undo runs. Every call is
// compared with the Model (which saw T1 and T2 denied), as to Allowed only
// while a reservation is in L. It returns the run, for the probes after.
func staleRun(t *testing.T, sp algorithms.Spec, p1, p2 stalePlan, betweenAt time.Duration, between int64) *undoRun {
	t.Helper()
	u := newUndoRun(t, sp)
	m, L := u.m, u.L
	ctx := context.Background()
	ys := [3]algorithms.Check{{}, {Spec: oneAnHour, Key: "route-/login"}, {Spec: oneAnHour, Key: "user-2"}}
	plans := [3]stalePlan{{}, p1, p2}
	var clocks [3]*steppedClock
	var stores [3]*redisstore.Store
	var ds [3][]algorithms.Decision
	var errs [3]error
	returned := [3]chan struct{}{nil, make(chan struct{}), make(chan struct{})}
	reserved2, undoing2, turn2 := make(chan struct{}), make(chan struct{}), make(chan struct{})
	start := func(i int) {
		go func() {
			defer close(returned[i])
			c := L
			c.Cost = plans[i].cost
			ds[i], errs[i] = stores[i].Take(ctx, c, ys[i])
		}()
	}
	for i := 1; i <= 2; i++ {
		clocks[i] = &steppedClock{t: m.base.Add(plans[i].at)}
		client := sharedCluster(t)
		client.AddHook(u.lose(t, ys[i]))
		client.AddHook(&callModeHook{after: true, mode: "1", key: u.lkey, do: func() {
			if i == 1 {
				start(2)
				select {
				case <-reserved2:
				case <-returned[2]:
				case <-time.After(10 * time.Second):
				}
			} else {
				close(reserved2)
			}
			clocks[i].set(m.base.Add(plans[i].undoAt))
		}})
		if i == 2 {
			client.AddHook(&callModeHook{mode: "2", key: u.lkey, do: func() {
				close(undoing2) // both of T2's reservations are done
				select {
				case <-turn2:
				case <-time.After(10 * time.Second):
				}
			}})
		}
		var err error
		stores[i], err = redisstore.New(client, redisstore.WithClock(clocks[i]), redisstore.WithPrefix(u.prefix))
		if err != nil {
			t.Fatal(err)
		}
	}
	m.clk.t = m.base.Add(p1.at)
	start(1)
	select {
	case <-returned[1]:
	case <-time.After(30 * time.Second):
		t.Fatal("T1 did not return")
	}
	select {
	case <-reserved2:
	default:
		t.Fatalf("T2 did not reserve L before T1's undo (T2: %+v, %v)", ds[2], errs[2])
	}
	select {
	case <-undoing2:
	case <-returned[2]:
		t.Fatalf("T2 returned without undoing L: %+v, %v", ds[2], errs[2])
	case <-time.After(10 * time.Second):
		t.Fatal("T2 did not come to its undo")
	}
	m.clk.t = m.base.Add(betweenAt)
	c := L
	c.Cost = between
	d, err := u.other.Take(ctx, c)
	if diff := m.compare("other", d, err, true, c); diff != "" {
		t.Fatal(diff)
	}
	close(turn2)
	select {
	case <-returned[2]:
	case <-time.After(10 * time.Second):
		t.Fatal("T2 did not return after its turn to undo")
	}
	for i := 1; i <= 2; i++ {
		m.clk.t = m.base.Add(plans[i].at)
		c := L
		c.Cost = plans[i].cost
		if diff := m.compare(fmt.Sprintf("T%d", i), ds[i], errs[i], true, c, ys[i]); diff != "" {
			t.Fatal(diff)
		}
		if !ds[i][0].Allowed || ds[i][1].Allowed {
			t.Fatalf("T%d = %+v; want L passing and y%d denied", i, ds[i], i)
		}
	}
	return u
}

// noMoreThanModel takes checks on s at base+at and fails the test if it
// is decided otherwise than the Model decides it, or reports more
// Remaining: the undos may keep units (erring towards denying), never
// give back more than they took.
func noMoreThanModel(t *testing.T, u *undoRun, at time.Duration, checks ...algorithms.Check) {
	t.Helper()
	m := u.m
	m.clk.t = m.base.Add(at)
	got, err := u.other.Take(context.Background(), checks...)
	m.mu.Lock()
	want, merr := m.model.TakeAt(m.clk.t, checks...)
	m.steps = append(m.steps, fmt.Sprintf("+%v other: Take (probe)", at))
	steps := strings.Join(m.steps, "\n")
	m.mu.Unlock()
	if err != nil || merr != nil {
		t.Fatalf("%s\nerrors: redis %v, model %v", steps, err, merr)
	}
	for j := range want {
		if got[j].Allowed != want[j].Allowed || got[j].Remaining > want[j].Remaining {
			t.Fatalf("%s\ncheck %d:\n\tredis %+v\n\tmodel %+v\n(Redis may keep units, never have more)", steps, j, got[j], want[j])
		}
	}
}

// TestClusterUndoWindowCountedAgainElsewhere: a fixed_window or
// sliding_window key L (6 a minute, untouched). T1 at +61.001 s reserves
// a unit of L, moving it to window 1; T2 at +59 s (a clock a little
// behind: it read the shared clock first, and reached Redis after T1)
// reserves 2 units, counted in window 1 too, where L is. T1's undo counts
// T2's reservation again on L as before T1, in window 1, where it was
// decided (TestClusterUndoRecountsInTheDecidedWindow). Another instance
// takes a unit of L at +62 s (window 1: L's state alone, T2's record
// dropped), then T2's undo, its record gone, takes its 2 units from the
// window its reservation counted them in, window 1, which holds them. A
// Take of 6 at +62 s (fixed_window), at +121 s (sliding_window, where
// window 1 is the previous one) is then decided as the Model (both
// cross-slot Takes denied) decides it. When T1's undo counted T2's units
// again in window 0, T2's instant's, T2's undo took them from the unit of
// the Take at +62 s, and the Take of 6 was admitted: 7 units in the
// window.
func TestClusterUndoWindowCountedAgainElsewhere(t *testing.T) {
	for _, c := range []struct {
		spec  algorithms.Spec
		probe time.Duration
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 6, Window: time.Minute}, 62 * time.Second},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 6, Window: time.Minute}, 121 * time.Second},
	} {
		t.Run(string(c.spec.Algorithm), func(t *testing.T) {
			u := staleRun(t, c.spec,
				stalePlan{at: 61*time.Second + time.Millisecond, undoAt: 61*time.Second + time.Millisecond, cost: 1},
				stalePlan{at: 59 * time.Second, undoAt: 62 * time.Second, cost: 2},
				62*time.Second, 1)
			six := u.L
			six.Cost = 6
			noMoreThanModel(t, u, c.probe, six)
		})
	}
}

// TestClusterUndoBucketRecountedBelow: a token_bucket or leaky_bucket key
// L (6 a minute: a unit every 10 s; burst 20), full. T1 at +0 reserves 5
// units (L owes 50 s), T2 at +1 s 5 more (L owes up to +100 s); T1's undo
// (made at +10 s) counts T2's again on L as before T1: owing up to +51 s.
// Another instance takes 3 units at +30 s (up to +81 s; T2's record
// dropped). T2's undo (made at +35 s), its record gone, told by its own
// record that L owed up to +50 s before it, past the undo's instant: no
// request since found L full without T2, and the 50 s came off, L owing
// up to +31 s. But without T1 and T2 L owed nothing at +30 s: the Model's
// Take there owes up to +60 s, and at +35 s 2.5 units are still owed. A
// Take of 20 at +35 s was admitted: 23 units in 35 s from a burst of 20.
func TestClusterUndoBucketRecountedBelow(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		t.Run(string(kind), func(t *testing.T) {
			sp := algorithms.Spec{Algorithm: kind, Limit: 6, Window: time.Minute, Burst: 20}
			u := staleRun(t, sp,
				stalePlan{at: 0, undoAt: 10 * time.Second, cost: 5},
				stalePlan{at: time.Second, undoAt: 35 * time.Second, cost: 5},
				30*time.Second, 3)
			all := u.L
			all.Cost = 20
			noMoreThanModel(t, u, 35*time.Second, all)
		})
	}
}
