package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// afterReserveHook runs fn once, after a reservation (mode 1) sent
// without its marker (one key) whose key is key ran.
type afterReserveHook struct {
	redistest.PassHooks
	key  string
	fn   func()
	once sync.Once
	hit  atomic.Bool
}

func (h *afterReserveHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if err == nil && len(args) > 7 && (cmd.Name() == "fcall" || cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			if nk, _ := args[2].(int); nk == 1 && fmt.Sprint(args[3]) == h.key && fmt.Sprint(args[3+nk+3]) == "1" {
				h.once.Do(func() { h.fn(); h.hit.Store(true) })
			}
		}
		return err
	}
}

// TestClusterBreakerClosedWhileSlotMigrates: while a slot migrates,
// Redis answers the calls it will not run there (TRYAGAIN; ASK to a client
// that follows no redirection), and a cross-slot undo that must note a
// give-back fails by the store's own choice (its note key left out): Redis
// answers every call, and serves every other slot. None of these is a
// failure of Redis for the circuit breaker, which is one for the whole
// Cluster: counted, a routine reshard opened the circuit, and every Take,
// of any key on any node, returned ErrCircuitOpen for the cooldown.
func TestClusterBreakerClosedWhileSlotMigrates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	do := mustDo(t)
	// user-2 is on slot 157 (node 0), which migrates to node 1; user-1 on
	// slot 12542 (node 2).
	slot := do(cl.Nodes[0], "CLUSTER", "KEYSLOT", "user-2")
	srcID, dstID := do(cl.Nodes[0], "CLUSTER", "MYID"), do(cl.Nodes[1], "CLUSTER", "MYID")
	do(cl.Nodes[1], "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	do(cl.Nodes[0], "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	ctx := context.Background()
	clk := &manualClock{t: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)}
	newStore := func(t *testing.T, o redis.ClusterOptions) (*redisstore.Store, *redis.ClusterClient, string) {
		t.Helper()
		o.Addrs = cl.Addrs()
		client := redis.NewClusterClient(&o)
		t.Cleanup(func() { _ = client.Close() })
		prefix := uniquePrefix(t)
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk), redisstore.WithCircuitBreaker(1, time.Hour), redisstore.WithTimeout(slowMachineTimeout))
		if err != nil {
			t.Fatal(err)
		}
		return s, client, prefix
	}
	// other is a key of another node, which Redis decides throughout.
	other := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, Key: "user-1"}
	stillClosed := func(t *testing.T, s *redisstore.Store, failed error) {
		t.Helper()
		// A caller's own breaker (the middleware's) tells it from a
		// failure of Redis by ErrTryAgain.
		if !errors.Is(failed, algorithms.ErrTryAgain) {
			t.Errorf("the error of a Take refused while a slot migrates, %q, does not match algorithms.ErrTryAgain", failed)
		}
		if d, err := s.Take(ctx, other); err != nil || !d[0].Allowed {
			t.Fatalf("Take(%s, another node's key) after a Take that failed with %q while a slot migrates = %+v, %v; want it decided (admitted)", other.Key, failed, d, err)
		}
	}

	t.Run("TRYAGAIN", func(t *testing.T) {
		s, _, _ := newStore(t, redis.ClusterOptions{})
		sp := smallSpec(algorithms.SlidingLog)
		_, err := s.Take(ctx, algorithms.Check{Spec: sp, Key: "user-1"}, algorithms.Check{Spec: sp, Key: "user-2"})
		if !redis.IsTryAgainError(err) {
			t.Fatalf("cross-slot sliding_log Take while user-2's slot migrates: %v; want TRYAGAIN", err)
		}
		stillClosed(t, s, err)
	})

	t.Run("ASK unfollowed", func(t *testing.T) {
		s, _, _ := newStore(t, redis.ClusterOptions{MaxRedirects: -1})
		_, err := s.Take(ctx, algorithms.Check{Spec: smallSpec(algorithms.FixedWindow), Key: "user-2"})
		if _, ask := redis.IsAskError(err); !ask {
			t.Fatalf("Take of a new key of the migrating slot, MaxRedirects -1: %v; want ASK", err)
		}
		stillClosed(t, s, err)
	})

	t.Run("undo noteless", func(t *testing.T) {
		s, client, prefix := newStore(t, redis.ClusterOptions{})
		// x's one unit goes between the phases (x's reservation denies);
		// a Take of y alone counts in y after y's reservation, whose
		// undo must then note a give-back.
		x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "user-1"}
		y := algorithms.Check{Spec: smallSpec(algorithms.TokenBucket), Key: "user-2"}
		race := &raceHook{key: prefix + ":{user-1}:fw:1:3600000000000:0:0:0", race: func() {
			if d, err := s.Take(ctx, x); err != nil || !d[0].Allowed {
				t.Errorf("racing Take(x) = %+v, %v", d, err)
			}
		}}
		since := &afterReserveHook{fn: func() {
			if d, err := s.Take(ctx, y); err != nil || !d[0].Allowed {
				t.Errorf("Take(y) after y's reservation = %+v, %v", d, err)
			}
		}}
		since.key = prefix + ":{user-2}:tb:3:1000000000:0:0:0"
		client.AddHook(race)
		client.AddHook(since)
		_, err := s.Take(ctx, x, y)
		if !race.hit.Load() || !since.hit.Load() {
			t.Fatalf("x raced: %v, y counted in since its reservation: %v; Take(x, y) = %v", race.hit.Load(), since.hit.Load(), err)
		}
		if err == nil || !strings.Contains(err.Error(), "names no note key") {
			t.Fatalf("Take(x, y) = %v; want the undo of y failed, its note key left out", err)
		}
		stillClosed(t, s, err)
	})

	if !t.Failed() {
		for _, n := range cl.Nodes {
			do(n, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
		}
	}
}

// TestGiveBackWhileSlotMigrates: while a slot migrates, a GiveBack of a
// sliding_log or sliding_buckets Take whose keys are all at the source is
// decided there, as the memory store decides it. Its call declared the
// key's side key (":u"), which a give-back neither reads nor writes and
// which no node holds but while a cross-slot reservation stands: Redis
// refused every such GiveBack (TRYAGAIN) for the whole migration, the
// units left consumed. (A token_bucket or leaky_bucket GiveBack writes
// its note key, which it declares: refused so while the note is not on
// the key's node; see "Cluster" in the package doc.)
func TestGiveBackWhileSlotMigrates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	do := mustDo(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	clk := &manualClock{t: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kinds := []algorithms.Kind{algorithms.SlidingLog, algorithms.SlidingBuckets}
	// user-2 is on slot 157 (node 0), which migrates to node 1; its keys
	// are written before, and stay at the source.
	for _, k := range kinds {
		c := algorithms.Check{Spec: smallSpec(k), Key: "user-2"}
		if _, err := s.Take(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Take(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	slot := do(cl.Nodes[0], "CLUSTER", "KEYSLOT", "user-2")
	srcID, dstID := do(cl.Nodes[0], "CLUSTER", "MYID"), do(cl.Nodes[1], "CLUSTER", "MYID")
	do(cl.Nodes[1], "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	do(cl.Nodes[0], "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	for _, k := range kinds {
		checks := []algorithms.Check{{Spec: smallSpec(k), Key: "user-2"}}
		d, err := s.Take(ctx, checks...)
		wd, werr := mem.Take(ctx, checks...)
		if err != nil || werr != nil || fmt.Sprint(d) != fmt.Sprint(wd) {
			t.Fatalf("%v: Take while the slot migrates = %+v, %v; memory %+v, %v", k, d, err, wd, werr)
		}
		got, want := make([]algorithms.Refunded, 1), make([]algorithms.Refunded, 1)
		err, werr = s.GiveBack(ctx, got, checks, d, 0), mem.GiveBack(ctx, want, checks, wd, 0)
		if err != nil || werr != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: GiveBack while the slot migrates, its keys at the source = %+v, %v; memory %+v, %v", k, got, err, want, werr)
		}
	}
}

// loseReplyHook fails, as a reply lost (io.EOF), the first reservation
// sent without its marker (one key) whose key is key, after it ran.
type loseReplyHook struct {
	redistest.PassHooks
	key string
	n   atomic.Int32
}

func (h *loseReplyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if err == nil && len(args) > 7 && (cmd.Name() == "fcall" || cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			if nk, _ := args[2].(int); nk == 1 && fmt.Sprint(args[3]) == h.key && fmt.Sprint(args[3+nk+3]) == "1" && h.n.Add(1) == 1 {
				cmd.SetErr(io.EOF)
				return io.EOF
			}
		}
		return err
	}
}

// TestCrossSlotResendWithoutMarkerSaysLeft: a cross-slot reservation sent
// without its marker (its slot migrating) that ran and whose reply was
// lost is sent again to be undone, and runs again (no marker answers its
// first run's reply): the undo gives back the second run, and the first
// stays consumed. The Take's error says that this slot's reservation may
// have been left in place, as it does for any failed undo or resend; it
// said only the reservation's error ("redisstore: take: EOF").
func TestCrossSlotResendWithoutMarkerSaysLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl := redistest.NewCluster(t)
	do := mustDo(t)
	ctx := context.Background()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	clk := &manualClock{t: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)}
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	x := algorithms.Check{Spec: smallSpec(algorithms.FixedWindow), Key: "user-1"} // slot 12542
	y := algorithms.Check{Spec: smallSpec(algorithms.FixedWindow), Key: "user-2"} // slot 157, migrating
	if _, err := s.Take(ctx, y); err != nil {                                     // y's key at the source
		t.Fatal(err)
	}
	slot := do(cl.Nodes[0], "CLUSTER", "KEYSLOT", "user-2")
	do(cl.Nodes[1], "CLUSTER", "SETSLOT", slot, "IMPORTING", do(cl.Nodes[0], "CLUSTER", "MYID"))
	do(cl.Nodes[0], "CLUSTER", "SETSLOT", slot, "MIGRATING", do(cl.Nodes[1], "CLUSTER", "MYID"))
	lose := &loseReplyHook{key: prefix + ":{user-2}:fw:3:1000000000:0:0:0"}
	client.AddHook(lose)
	_, err = s.Take(ctx, x, y)
	if lose.n.Load() < 2 {
		t.Fatalf("y's reservation sent without its marker %d times, want 2 (lost, then sent again); Take = %v", lose.n.Load(), err)
	}
	got := make([]algorithms.Decision, 1)
	if perr := s.Peek(ctx, got, []algorithms.Check{y}); perr != nil || got[0].Remaining != 1 {
		t.Fatalf("Peek(y) = %+v, %v; want Remaining 1 (the Take before, and the lost run left)", got, perr)
	}
	if err == nil || !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "slot "+slot) || !strings.Contains(err.Error(), "may have been left in place") {
		t.Fatalf("Take(x, y), y's first run's reply lost = %v; want its error (io.EOF), saying the reservation of slot %s may have been left in place", err, slot)
	}
}
