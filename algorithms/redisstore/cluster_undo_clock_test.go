package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// The undo of a bucket key's reservation (cluster.lua, undoBucket) compares
// the key's instant before the reservation with the undo's instant u,
// reckoned from the reservation's: on the server's clock u is the time the
// undo reached Redis after the reservation (above 0), with WithClock it is
// 0 (the Take's one instant). These tests take x between the reservation
// and the undo, so that the undo finds x changed and must choose between
// subtracting the reservation's units and keeping them.

// bucketUndoKey returns the Redis key of a token_bucket or leaky_bucket
// check on key "user-1" of 10 per window w, burst 10, under prefix.
func bucketUndoKey(prefix string, kind algorithms.Kind, w time.Duration) string {
	code := map[algorithms.Kind]string{algorithms.TokenBucket: "tb", algorithms.LeakyBucket: "lb"}[kind]
	return fmt.Sprintf("%s:{user-1}:%s:10:%d:10:0:0", prefix, code, w.Nanoseconds())
}

// TestClusterUndoChangedBucketInjectedClock: with WithClock (standing at
// 2026-11-30 08:00:00.5 UTC, days before the server's clock), x holds 1 unit,
// the Take reserves 2, loses the race for y, and another instance takes 1
// unit of x at the same instant before the undo. Every request between
// came at the reservation's instant, so subtracting the reservation's 2
// units is exact: x ends with the 2 units the two other requests took. An
// undo that read the server's clock instead of the Take's instant would
// find the undo days after x's old instant and keep the 2 units.
func TestClusterUndoChangedBucketInjectedClock(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		t.Run(string(kind), func(t *testing.T) {
			race := newLostRace(t)
			// Half a second into the second: the reservation's instant is
			// reckoned to the nanosecond (x's old instant is 100 ms after it).
			race.clk.t = race.clk.t.Add(500*time.Millisecond + 7)
			prefix, other, y := race.prefix, race.other, race.y
			ctx := context.Background()
			x := algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Second, Burst: 10}, Key: "user-1"}
			one := func() algorithms.Decision {
				d, err := other.Take(ctx, x)
				if err != nil || !d[0].Allowed {
					t.Fatalf("Take(x) by the other instance = %+v, %v; want admitted", d, err)
				}
				return d[0]
			}
			client := sharedCluster(t)
			client.AddHook(race.hook)
			var between atomic.Bool
			client.AddHook(&callModeHook{mode: "2", key: bucketUndoKey(prefix, kind, time.Second), do: func() {
				one()
				between.Store(true)
			}})
			s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			before := one()
			d, err := s.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 2}, y)
			if err != nil {
				t.Fatal(err)
			}
			if !race.hook.hit.Load() || d[1].Allowed || !between.Load() {
				t.Fatalf("Take(x cost 2, y) = %+v (race run %v, x taken before the undo %v); want y denied after both", d, race.hook.hit.Load(), between.Load())
			}
			after := one()
			if after.Remaining != before.Remaining-2 {
				t.Fatalf("x after the undo: a Take reports Remaining %d, want %d (the units of the three 1-unit Takes only; before: %+v)", after.Remaining, before.Remaining-2, before)
			}
		})
	}
}

// TestClusterUndoChangedBucketServerClock: on the server's clock, x (10 an
// hour, burst 10) is untouched, the Take reserves 2 units, loses the race
// for y, and another instance takes 1 unit of x before the undo, at an
// instant after the reservation's. Without the reservation, that request
// would have found x full and left it full from its own instant on; with
// the reservation's units subtracted, x would be full from the
// reservation's earlier instant: more than the world without it allows.
// So the undo keeps them (cluster.lua: erring towards denying) and x ends
// with 3 units taken, and the Take reports x as at the reservation's
// instant. An undo decided at its own instant as if it were the
// reservation's (u = 0) would subtract them; one that decided the report
// at its own instant would report x full sooner.
func TestClusterUndoChangedBucketServerClock(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		t.Run(string(kind), func(t *testing.T) {
			prefix := uniquePrefix(t)
			ctx := context.Background()
			other, err := redisstore.New(sharedCluster(t), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "route-/login"}
			yKey := prefix + ":{route-/login}:fw:1:3600000000000:0:0:0"
			x := algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Hour, Burst: 10}, Key: "user-1"}
			take := func(c algorithms.Check) algorithms.Decision {
				d, err := other.Take(ctx, c)
				if err != nil || !d[0].Allowed {
					t.Errorf("Take(%s) by the other instance = %+v, %v; want admitted", c.Key, d, err)
					return algorithms.Decision{}
				}
				return d[0]
			}
			client := sharedCluster(t)
			var raced, between atomic.Bool
			client.AddHook(&callModeHook{mode: "1", key: yKey, do: func() {
				take(y) // y's one unit goes to the other instance
				raced.Store(true)
			}})
			client.AddHook(&callModeHook{mode: "2", key: bucketUndoKey(prefix, kind, time.Hour), do: func() {
				take(x)
				between.Store(true)
			}})
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 2}, y)
			if err != nil {
				t.Fatal(err)
			}
			if !raced.Load() || d[1].Allowed || !between.Load() {
				t.Fatalf("Take(x cost 2, y) = %+v (race run %v, x taken before the undo %v); want y denied after both", d, raced.Load(), between.Load())
			}
			// x's report is decided, after the undo, at the reservation's
			// instant t: the 3 units taken since t leave x full at t + 3·6 min.
			if want := 3 * time.Hour / 10; d[0].ResetAfter != want {
				t.Fatalf("Take(x cost 2, y) reports x's ResetAfter %v, want %v (decided at the reservation's instant, x holding the 3 units taken since)", d[0].ResetAfter, want)
			}
			// A token comes back every 6 minutes: none within the test.
			if after := take(x); after.Remaining != 10-4 {
				t.Fatalf("x after the undo: a Take reports Remaining %d, want %d (the reservation's 2 units kept, with the 1-unit Takes before and after)", after.Remaining, 10-4)
			}
		})
	}
}

// afterReservationsHook runs do once, after n reservations (script mode
// 1) have been answered.
type afterReservationsHook struct {
	redistest.PassHooks
	mu sync.Mutex
	n  int
	do func()
}

func (h *afterReservationsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if _, mode, ok := fcallMode(cmd); ok && mode == "1" {
			h.mu.Lock()
			h.n--
			if h.n == 0 {
				h.do()
			}
			h.mu.Unlock()
		}
		return err
	}
}

// TestClusterUndoRunsAfterClose: the store is closed after both
// reservations of a cross-slot Take came back, y's denied (the race lost):
// the undo of x still runs (a Close must not leave a reservation in
// place), so the denied Take consumes nothing, and the Take reports the
// denial, not ErrClosed. A Take after the Close is refused.
func TestClusterUndoRunsAfterClose(t *testing.T) {
	race := newLostRace(t)
	prefix, other, y := race.prefix, race.other, race.y
	ctx := context.Background()
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1"}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	client.AddHook(race.hook)
	var s *redisstore.Store
	closed := make(chan error, 1)
	client.AddHook(&afterReservationsHook{n: 2, do: func() { closed <- s.Close() }})
	undos := &undoRecorder{prefix: prefix}
	client.AddHook(undos)
	// WithTimeout(0): the reservations run on the Take's goroutine, where
	// the hook may Close the store between the phases; under a timeout
	// (the default) a call runs in a goroutine of the store, which Close
	// waits for: the hook's own.
	s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(prefix), redisstore.WithTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	before, err := other.Take(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 2}, y)
	if err != nil {
		t.Fatalf("Take(x cost 2, y) with the store closed after the reservations: %v; want y denied, x undone", err)
	}
	if len(closed) != 1 || d[1].Allowed || len(undos.keys()) != 1 {
		t.Fatalf("Take(x cost 2, y) = %+v (closed between the phases: %v, undo calls %v); want y denied and x undone after the Close", d, len(closed) == 1, undos.keys())
	}
	if d[0].Remaining != before[0].Remaining {
		t.Fatalf("x reported Remaining %d after the undone reservation, want %d as before", d[0].Remaining, before[0].Remaining)
	}
	after, err := other.Take(ctx, x)
	if err != nil || after[0].Remaining != before[0].Remaining-1 {
		t.Fatalf("Take(x) on the other instance = %+v, %v; want Remaining %d (the reservation undone)", after, err, before[0].Remaining-1)
	}
	if _, err := s.Take(ctx, x); !errors.Is(err, algorithms.ErrClosed) {
		t.Fatalf("Take after Close: %v, want ErrClosed", err)
	}
}

// TestClusterUndoReplyLostIsNotRepeated: the reply to the undo of a
// cross-slot reservation is lost after Redis ran it (the connection to x's
// node closes instead). Undoing is not idempotent (each run subtracts the
// reservation's units again, from units others consumed), so the store
// must not send it again, as go-redis does with a command whose connection
// failed: the Take returns the error, and x holds exactly the unit another
// instance took before it.
func TestClusterUndoReplyLostIsNotRepeated(t *testing.T) {
	race := newLostRace(t)
	prefix, other, y := race.prefix, race.other, race.y
	ctx := context.Background()
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1"}
	// The cluster's layout, with x's node behind a proxy that can lose a
	// reply.
	direct := sharedCluster(t)
	xSlot, err := direct.ClusterKeySlot(ctx, "{user-1}").Result()
	if err != nil {
		t.Fatal(err)
	}
	shards, err := direct.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var slots []redis.ClusterSlot
	var proxy *replyDropper
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			if n.Role != "master" {
				continue
			}
			addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
			for _, r := range sh.Slots {
				if r.Start <= xSlot && xSlot <= r.End && proxy == nil {
					proxy = newReplyDropper(t, addr)
				}
				slots = append(slots, redis.ClusterSlot{Start: int(r.Start), End: int(r.End), Nodes: []redis.ClusterNode{{Addr: addr}}})
			}
		}
	}
	if proxy == nil {
		t.Fatalf("no node serves slot %d in %+v", xSlot, shards)
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			out := make([]redis.ClusterSlot, len(slots))
			for i, sl := range slots {
				out[i] = sl
				if sl.Nodes[0].Addr == proxy.target {
					out[i].Nodes = []redis.ClusterNode{{Addr: proxy.Addr()}}
				}
			}
			return out, nil
		},
		MaxRedirects: 3,
	})
	t.Cleanup(func() { _ = client.Close() })
	client.AddHook(race.hook)
	xKey := prefix + ":{user-1}:fw:5:3600000000000:0:0:0"
	client.AddHook(&callModeHook{mode: "2", key: xKey, do: func() { proxy.armed.Store(true) }})
	s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	before, err := other.Take(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	_, terr := s.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 2}, y)
	if !race.hook.hit.Load() || proxy.dropped.Load() != 1 {
		t.Fatalf("race run %v, replies dropped %d (Take: %v); want the race lost and the undo's reply dropped once", race.hook.hit.Load(), proxy.dropped.Load(), terr)
	}
	if terr == nil {
		t.Error("a Take whose undo's reply was lost returned no error")
	}
	after, err := other.Take(ctx, x)
	if err != nil || after[0].Remaining != before[0].Remaining-1 {
		t.Fatalf("Take(x) on the other instance = %+v, %v; want Remaining %d (the reservation undone once)", after, err, before[0].Remaining-1)
	}
}

// TestClusterUndoManyRecords: a cross-slot Take whose slot of x holds
// six checks (six records to undo, one per key written) loses the race
// for y: all six reservations are undone.
func TestClusterUndoManyRecords(t *testing.T) {
	race := newLostRace(t)
	other, y := race.other, race.y
	ctx := context.Background()
	var xs []algorithms.Check
	for i := range 6 {
		xs = append(xs, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: int64(5 + i), Window: time.Hour}, Key: "user-1"})
	}
	client := sharedCluster(t)
	client.AddHook(race.hook)
	s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(ctx, append(xs, y)...)
	if err != nil {
		t.Fatal(err)
	}
	if !race.hook.hit.Load() || d[len(xs)].Allowed {
		t.Fatalf("Take(x1..x6, y) = %+v, want y denied (the race lost)", d)
	}
	after, err := other.Take(ctx, xs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range after {
		if a.Remaining != xs[i].Spec.Limit-1 {
			t.Errorf("x%d after the undo: Remaining %d, want %d (only this Take's unit)", i+1, a.Remaining, xs[i].Spec.Limit-1)
		}
	}
}
