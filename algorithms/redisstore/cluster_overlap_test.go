package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// overlapSpecs are undoStateSpecs with room for three reservations on top
// of the +31 s units: 6 a minute.
var overlapSpecs = []algorithms.Spec{
	{Algorithm: algorithms.SlidingLog, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 6, Window: time.Minute, Buckets: 6},
}

// overlapCase is a run of TestClusterOverlappingReservations: n
// cross-slot Takes whose reservations of one key overlap, undone in
// order (1-based; a Take in stands is admitted, and never undone).
type overlapCase struct {
	order  []int
	stands []int
	plain  int  // a plain Take of L follows T_plain's reservation, when > 0
	later  bool // T2 and T3 at +91.5 s and +100 s, each forgetting more
}

func (c overlapCase) name() string {
	var b strings.Builder
	b.WriteString("undo")
	for _, i := range c.order {
		fmt.Fprintf(&b, "_T%d", i)
	}
	for _, i := range c.stands {
		fmt.Fprintf(&b, "_T%d_stands", i)
	}
	if c.plain > 0 {
		fmt.Fprintf(&b, "_taken_after_T%d", c.plain)
	}
	if c.later {
		b.WriteString("_later")
	}
	return b.String()
}

// TestClusterOverlappingReservations: a sliding_log or sliding_buckets key
// L (6 a minute) holds 2 units taken at +1 s and 2 at +31 s. At +61.001 s
// two or three cross-slot Takes T1, T2, T3 of (L, y_i) reserve L one after
// the other (T1's reservation forgets the +1 s units), each before any is
// undone; each loses the race for its y_i (another instance takes its one
// unit between the peek and the reservation) and undoes L, the undos in
// every order: denied Takes, which forget no event of L. A Take of L of
// cost 3 at +31 s (a clock behind) must then count the +1 s units, and be
// denied, as the Model (which saw every Take denied) decides. In the
// "stands" runs one of them wins its race: an admitted Take, which forgets
// the +1 s units for good (what the others' undos handed over to it is
// never put back), and once it is given back the Take at +31 s is
// admitted. In the "taken_after" runs a plain Take of L (one script call)
// follows one of the reservations: a request counted, which forgets the
// +1 s units in any world; given back, it leaves the Take at +31 s
// admitted too. In the "later" runs T2 and T3 come at +91.5 s and +100 s
// (on clocks of their own): T2's reservation forgets the +31 s units too,
// and moves the ring on again.
//
// After the overlapping Takes, one more cross-slot Take of L at +61.001 s
// is undone alone, which must put back only what it forgot itself; and L
// goes on as the Model's. Every call is compared with the Model.
func TestClusterOverlappingReservations(t *testing.T) {
	var cases []overlapCase
	for _, o := range [][]int{{1, 2}, {2, 1}, {1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}} {
		cases = append(cases, overlapCase{order: o})
	}
	cases = append(cases,
		overlapCase{order: []int{1}, stands: []int{2}},
		overlapCase{order: []int{2}, stands: []int{1}},
		overlapCase{order: []int{1, 3}, stands: []int{2}},
		overlapCase{order: []int{3, 1}, stands: []int{2}},
		overlapCase{order: []int{2, 3}, stands: []int{1}},
		overlapCase{order: []int{1, 2}, stands: []int{3}},
		overlapCase{order: []int{1, 2}, plain: 1},
		overlapCase{order: []int{2, 1}, plain: 1},
		overlapCase{order: []int{1, 2}, plain: 2},
		overlapCase{order: []int{2, 1}, plain: 2},
		overlapCase{order: []int{2, 1, 3}, plain: 2},
	)
	for _, o := range [][]int{{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}} {
		cases = append(cases, overlapCase{order: o, later: true})
	}
	cases = append(cases,
		overlapCase{order: []int{2, 3}, stands: []int{1}, later: true},
		overlapCase{order: []int{3, 1}, stands: []int{2}, later: true},
		overlapCase{order: []int{1, 3}, stands: []int{2}, later: true},
		overlapCase{order: []int{2, 1}, stands: []int{3}, later: true},
	)
	for _, sp := range overlapSpecs {
		for _, c := range cases {
			t.Run(string(sp.Algorithm)+"/"+c.name(), func(t *testing.T) { overlapRun(t, sp, c) })
		}
	}
}

// oneAnHour is the spec of the checks y a cross-slot Take is made to lose
// its race for: one unit an hour.
var oneAnHour = algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}

// undoRun is the setup the cluster undo tests share: a modelRun; a key
// prefix of its own; other, another instance on the run's clock; and L,
// a check of the spec under test on user-1, whose Redis key is lkey.
type undoRun struct {
	m      *modelRun
	prefix string
	other  *redisstore.Store
	L      algorithms.Check
	lkey   string
}

func newUndoRun(t *testing.T, sp algorithms.Spec) *undoRun {
	t.Helper()
	m := newModelRun(t)
	prefix := uniquePrefix(t)
	other, err := redisstore.New(sharedCluster(t), redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	L := algorithms.Check{Spec: sp, Key: "user-1"}
	return &undoRun{m: m, prefix: prefix, other: other, L: L, lkey: redisKeys(prefix, L)[0]}
}

// lose returns a hook that makes the first reservation of y (one unit an
// hour) lose its race: just before it, other takes y's unit, compared with
// the Model.
func (u *undoRun) lose(t *testing.T, y algorithms.Check) *raceHook {
	return &raceHook{key: redisKeys(u.prefix, y)[0], race: func() {
		d, err := u.other.Take(context.Background(), y)
		if diff := u.m.compare("other", d, err, false, y); diff != "" {
			t.Error(diff)
		}
	}}
}

// reservationChain is n cross-slot Takes T_1..T_n of (L, ys[i]), each on
// a store of its own on a clock of its own (at at[i] past the Model's
// base), whose reservations of u's L overlap: T_i's reservation of L, once
// made, starts T_{i+1} and waits until it has reserved L in turn (or
// returned); the last one's goes on at once. T_i's undo of L waits for
// its turn. Each T_i loses its race for ys[i] (undoRun.lose) unless it
// stands. ds[i] and errs[i] are T_i's answer once run has returned.
type reservationChain struct {
	u      *undoRun
	n      int
	ys     []algorithms.Check
	at     []time.Duration
	stands map[int]bool
	ds     [][]algorithms.Decision
	errs   []error
	stores []*redisstore.Store

	reserved, turn, returned []chan struct{}
}

// newReservationChain makes the stores of T_1..T_n (ys and at are indexed
// from 1, and may run past n). reserved, when not nil, is called in T_i's
// hook once its reservation of L is made, before T_{i+1} starts.
func newReservationChain(t *testing.T, u *undoRun, n int, ys []algorithms.Check, at []time.Duration, stands map[int]bool, reserved func(i int)) *reservationChain {
	t.Helper()
	c := &reservationChain{u: u, n: n, ys: ys, at: at, stands: stands,
		ds: make([][]algorithms.Decision, n+1), errs: make([]error, n+1), stores: make([]*redisstore.Store, n+1),
		reserved: make([]chan struct{}, n+1), turn: make([]chan struct{}, n+1), returned: make([]chan struct{}, n+1)}
	for i := 1; i <= n; i++ {
		c.reserved[i], c.turn[i], c.returned[i] = make(chan struct{}), make(chan struct{}), make(chan struct{})
	}
	for i := 1; i <= n; i++ {
		client := sharedCluster(t)
		if !stands[i] {
			client.AddHook(u.lose(t, ys[i]))
		}
		client.AddHook(&callModeHook{after: true, mode: "1", key: u.lkey, do: func() {
			if reserved != nil {
				reserved(i)
			}
			if i < n {
				c.start(i + 1)
				select {
				case <-c.reserved[i+1]:
				case <-c.returned[i+1]:
				case <-time.After(10 * time.Second):
				}
			}
			close(c.reserved[i])
		}})
		client.AddHook(&callModeHook{mode: "2", key: u.lkey, do: func() {
			select {
			case <-c.turn[i]:
			case <-time.After(10 * time.Second):
			}
		}})
		var err error
		c.stores[i], err = redisstore.New(client, redisstore.WithClock(&manualClock{t: u.m.base.Add(at[i])}), redisstore.WithPrefix(u.prefix))
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *reservationChain) start(i int) {
	go func() {
		defer close(c.returned[i])
		c.ds[i], c.errs[i] = c.stores[i].Take(context.Background(), c.u.L, c.ys[i])
	}()
}

// run starts T_1 and waits for the reservations, gives the undos their
// turns in order, and waits until every T_i has returned.
func (c *reservationChain) run(t *testing.T, order []int) {
	t.Helper()
	c.start(1)
	select {
	case <-c.reserved[1]:
	case <-c.returned[1]:
	case <-time.After(30 * time.Second):
		t.Fatal("the reservations did not happen")
	}
	for _, i := range order {
		close(c.turn[i])
		select {
		case <-c.returned[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("T%d did not return after its turn to undo", i)
		}
	}
	for i := 1; i <= c.n; i++ {
		select {
		case <-c.returned[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("T%d did not return", i)
		}
	}
}

// compare compares each T_i with the Model at its instant, only as to
// Allowed (each saw the others' reserved units), and wants L passing and
// y_i admitted just when T_i stands.
func (c *reservationChain) compare(t *testing.T) {
	t.Helper()
	m := c.u.m
	for i := 1; i <= c.n; i++ {
		m.clk.t = m.base.Add(c.at[i])
		if diff := m.compare(fmt.Sprintf("T%d", i), c.ds[i], c.errs[i], true, c.u.L, c.ys[i]); diff != "" {
			t.Fatal(diff)
		}
		if !c.ds[i][0].Allowed || c.ds[i][1].Allowed == !c.stands[i] {
			t.Fatalf("T%d = %+v; want L passing and y%d admitted %v", i, c.ds[i], i, c.stands[i])
		}
	}
}

func overlapRun(t *testing.T, sp algorithms.Spec, c overlapCase) {
	u := newUndoRun(t, sp)
	m, prefix, other, L := u.m, u.prefix, u.other, u.L
	ctx := context.Background()
	n := len(c.order) + len(c.stands)
	stands := make(map[int]bool)
	for _, i := range c.stands {
		stands[i] = true
	}
	// y_i: one unit an hour, each on a slot other than L's.
	ys := make([]algorithms.Check, n+2)
	for i, k := range []string{"route-/login", "user-2", "user-4", "ip-1"}[:n+1] {
		ys[i+1] = algorithms.Check{Spec: oneAnHour, Key: k}
	}
	at := make([]time.Duration, n+2) // T_i's instant, on a clock of its own
	for i := range at {
		at[i] = 61*time.Second + time.Millisecond
		if c.later && i > 1 {
			at[i] = []time.Duration{91500 * time.Millisecond, 100 * time.Second}[min(i-2, 1)]
		}
	}
	var plainD []algorithms.Decision // the plain Take's
	var plainErr error
	chain := newReservationChain(t, u, n, ys, at, stands, func(i int) {
		if i == c.plain {
			plainD, plainErr = other.Take(ctx, L)
			if diff := m.compare("other", plainD, plainErr, true, L); diff != "" {
				t.Error(diff)
			}
		}
	})
	lone, err := redisstore.New(func() *redis.ClusterClient {
		client := sharedCluster(t)
		client.AddHook(u.lose(t, ys[n+1]))
		return client
	}(), redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	take := m.taker(other, "other")
	two, three := L, L
	two.Cost, three.Cost = 2, 3
	take(time.Second, two)
	take(31*time.Second, two)

	m.clk.t = m.base.Add(61*time.Second + time.Millisecond)
	chain.run(t, c.order)
	chain.compare(t)
	// One more cross-slot Take, alone, undone.
	m.clk.t = m.base.Add(61*time.Second + time.Millisecond)
	d, err := lone.Take(ctx, L, ys[n+1])
	if diff := m.compare("lone", d, err, false, L, ys[n+1]); diff != "" {
		t.Fatal(diff)
	}
	if d[1].Allowed {
		t.Fatalf("the lone cross-slot Take = %+v; want y denied", d)
	}
	// The admitted Takes given back: the +1 s units stay forgotten (a log
	// that had them back would count them once the newest event is gone).
	for _, i := range c.stands {
		m.giveBack(other, "other", fmt.Sprintf("T%d", i), []algorithms.Check{L, ys[i]}, chain.ds[i])
	}
	if c.plain > 0 {
		if plainErr != nil || !plainD[0].Allowed {
			t.Fatalf("the plain Take of L = %+v, %v; want admitted", plainD, plainErr)
		}
		m.giveBack(other, "other", "the plain Take", []algorithms.Check{L}, plainD)
	}
	forgot := len(c.stands) > 0 || c.plain > 0
	if d := take(31*time.Second, three); d[0].Allowed != forgot {
		t.Fatalf("Take(L cost 3) at +31s = %+v; want Allowed %v", d, forgot)
	}
	goesOnAsModel(take, L)
}

// TestClusterSideKeyNotTheStores: a side key the store did not write (a
// hash, a string it cannot parse) under a sliding_log or sliding_buckets
// key fails a cross-slot Take's reservation as a foreign value, before it
// writes anything there: the Take is an error, the side key is left as it
// is, and the other slot's reservation is undone (y keeps its one unit).
func TestClusterSideKeyNotTheStores(t *testing.T) {
	for _, sp := range undoStateSpecs {
		for _, foreign := range []string{"hash", "string"} {
			t.Run(string(sp.Algorithm)+"/"+foreign, func(t *testing.T) {
				ctx := context.Background()
				client := sharedCluster(t)
				prefix := uniquePrefix(t)
				clk := &manualClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
				s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				L := algorithms.Check{Spec: sp, Key: "user-1"}
				y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "route-/login"}
				side := sideKeys(prefix, L)[0]
				if foreign == "hash" {
					err = client.HSet(ctx, side, "app", "data").Err()
				} else {
					err = client.Set(ctx, side, "app data", 0).Err()
				}
				if err != nil {
					t.Fatal(err)
				}
				if d, err := s.Take(ctx, L, y); err == nil || !strings.Contains(err.Error(), side) {
					t.Fatalf("Take(L, y) with a foreign side key = %+v, %v; want an error naming %s", d, err, side)
				}
				if typ := client.Type(ctx, side).Val(); typ != foreign {
					t.Fatalf("the side key is a %s after the Take, want the application's %s", typ, foreign)
				}
				if n := client.Exists(ctx, redisKeys(prefix, L)...).Val(); n != 0 {
					t.Fatalf("the failed reservation wrote %d of L's keys", n)
				}
				if d, err := s.Take(ctx, y); err != nil || !d[0].Allowed {
					t.Fatalf("Take(y) after the failed cross-slot Take = %+v, %v; want admitted (its reservation undone)", d, err)
				}
			})
		}
	}
}
