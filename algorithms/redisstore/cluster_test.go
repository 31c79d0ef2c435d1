package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// clusterOnce shares one three-node cluster among the cluster tests.
var (
	clusterOnce sync.Once
	clusterSrv  *redistest.Cluster
	clusterErr  error
	clusterDir  string // removed by TestMain
)

// sharedCluster returns a client of the shared cluster with go-redis's
// default options (see newClient), closed at the end of t.
func sharedCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	return sharedClusterOf(t, false)
}

// sharedBoundCluster is sharedCluster with ContextTimeoutEnabled (see
// newBoundClient).
func sharedBoundCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	return sharedClusterOf(t, true)
}

func sharedClusterOf(t *testing.T, ctxTimeouts bool) *redis.ClusterClient {
	t.Helper()
	redistest.Require(t)
	clusterOnce.Do(func() {
		clusterDir, clusterErr = makeTemp()
		if clusterErr == nil {
			clusterSrv, clusterErr = redistest.StartCluster(clusterDir)
		}
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs(), ContextTimeoutEnabled: ctxTimeouts})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// keysOnThreeSlots returns keys whose hash tags land on the three nodes
// (slots 12542, 157, 8283, 9317 and 280).
func keysOnThreeSlots() []string {
	return []string{"user-1", "user-2", "user-4", "ip-1", "route-/login"}
}

// TestClusterKeysSpanNodes guards the other cluster tests: their keys hash
// to slots served by all three nodes.
func TestClusterKeysSpanNodes(t *testing.T) {
	client := sharedCluster(t)
	nodes := map[int]bool{}
	for _, k := range keysOnThreeSlots() {
		sl, err := client.ClusterKeySlot(context.Background(), "{"+k+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case sl <= 5460:
			nodes[0] = true
		case sl <= 10922:
			nodes[1] = true
		default:
			nodes[2] = true
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("the test keys land on %d nodes, want 3", len(nodes))
	}
}

// TestClusterMatchesMemoryStore: on a real three-node cluster, Takes whose
// checks span several slots (and nodes) decide exactly as the memory store,
// all or nothing, over random traces.
func TestClusterMatchesMemoryStore(t *testing.T) {
	client := sharedBoundCluster(t)
	hook := &countHook{}
	client.AddHook(hook)
	for seed := range 10 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := newRand(seed)
			clk := &manualClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
			mem, rs := pairedStores(t, client, clk)
			var specs []algorithms.Spec
			for _, k := range algorithms.Kinds {
				s := randomSpec(r, k)
				if r.IntN(2) == 0 {
					s = smallSpec(k)
				}
				specs = append(specs, s)
			}
			keys := keysOnThreeSlots()
			ctx := context.Background()
			for i := range 200 {
				step(r, clk, specs[r.IntN(len(specs))].Window)
				checks := make([]algorithms.Check, 1+r.IntN(4))
				for j := range checks {
					s := specs[r.IntN(len(specs))]
					checks[j] = algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))], Cost: randomCost(r, s)}
				}
				want, werr := mem.Take(ctx, checks...)
				got, gerr := rs.Take(ctx, checks...)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("step %d %+v: errors differ: memory %v, redis %v", i, checks, werr, gerr)
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("step %d %+v\ncheck %d: cluster %+v\n        memory  %+v", i, checks, j, got[j], want[j])
					}
				}
			}
		})
	}
}

// TestClusterAllOrNothingAcrossSlots: a Take whose checks live on three
// nodes, denied by one of them, consumes nothing on the others; and many
// goroutines on two stores never admit more than any limit.
func TestClusterAllOrNothingAcrossSlots(t *testing.T) {
	client := sharedCluster(t)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	day := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 24 * time.Hour}
	tight := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	a := algorithms.Check{Spec: day, Key: "user-1"}
	b := algorithms.Check{Spec: day, Key: "user-2"}
	c := algorithms.Check{Spec: tight, Key: "user-3"}
	if d, err := s.Take(ctx, c); err != nil || !d[0].Allowed {
		t.Fatalf("Take(c) = %+v, %v", d, err)
	}
	for range 3 {
		d, err := s.Take(ctx, a, b, c)
		if err != nil {
			t.Fatal(err)
		}
		if d[0].Allowed != true || d[1].Allowed != true || d[2].Allowed {
			t.Fatalf("Take(a, b, c) = %+v, want a and b passing, c denied", d)
		}
		if d[0].Remaining != 5 || d[1].Remaining != 5 {
			t.Fatalf("Take(a, b, c) reports a, b with Remaining %d, %d; want 5, 5 (nothing consumed)", d[0].Remaining, d[1].Remaining)
		}
	}
	d, err := s.Take(ctx, a, b)
	if err != nil || d[0].Remaining != 4 || d[1].Remaining != 4 {
		t.Fatalf("Take(a, b) after denied cross-slot Takes = %+v, %v; want Remaining 4 and 4", d, err)
	}

	// Concurrency: 2 x 16 goroutines take (x on one node, y on another);
	// x has capacity 20 and y 7. Every admitted Take consumed on both, so
	// admitted <= 7 and y's count equals the admitted Takes.
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 20, Window: 24 * time.Hour}, Key: "ip-1"}
	y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 24 * time.Hour}, Key: "route-/login"}
	s2, err := redisstore.New(sharedCluster(t), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func(st *redisstore.Store) {
			defer wg.Done()
			for range 3 {
				d, err := st.Take(ctx, x, y)
				if err != nil {
					t.Error(err)
					return
				}
				if d[0].Allowed && d[1].Allowed {
					admitted.Add(1)
				}
			}
		}([]*redisstore.Store{s, s2}[g%2])
	}
	wg.Wait()
	if got := admitted.Load(); got != 7 {
		t.Fatalf("admitted %d cross-slot Takes, want exactly y's limit 7", got)
	}
	d, err = s.Take(ctx, x)
	if err != nil || d[0].Remaining != 20-7-1 {
		t.Fatalf("Take(x) = %+v, %v; want Remaining %d (only the 7 admitted Takes consumed)", d, err, 20-7-1)
	}
}

// raceHook makes a reservation lose a race: before the first reservation
// (script mode 1) whose keys include key, it runs race once.
type raceHook struct {
	redistest.PassHooks
	key  string
	race func()
	once sync.Once
	hit  atomic.Bool
}

func (h *raceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) > 3 && (cmd.Name() == "fcall" || cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			nk, _ := args[2].(int)
			if len(args) > 3+nk+3 && fmt.Sprint(args[3+nk+3]) == "1" {
				for _, k := range args[3 : 3+nk] {
					if s, _ := k.(string); s == h.key {
						h.once.Do(func() { h.race(); h.hit.Store(true) })
					}
				}
			}
		}
		return next(ctx, cmd)
	}
}

// lostRace sets up a cross-slot Take that loses a race: between its peek
// and its reservation of y, another instance takes y's one unit.
type lostRace struct {
	prefix string
	clk    *manualClock
	other  *redisstore.Store // the other instance, on the shared cluster
	y      algorithms.Check  // one unit an hour of route-/login
	hook   *raceHook         // on the racing Take's client: other takes y
}

// newLostRace returns a lostRace under a prefix of its own; the clock
// reads 2026-11-30 08:00 UTC. The racing Take of y fails t unless admitted.
func newLostRace(t *testing.T) *lostRace {
	t.Helper()
	prefix := uniquePrefix(t)
	clk := &manualClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	other, err := redisstore.New(sharedCluster(t), redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "route-/login"}
	yKey := prefix + ":{route-/login}:fw:1:3600000000000:0:0:0"
	hook := &raceHook{key: yKey, race: func() {
		if d, err := other.Take(context.Background(), y); err != nil || !d[0].Allowed {
			t.Errorf("racing Take(y) = %+v, %v", d, err)
		}
	}}
	return &lostRace{prefix: prefix, clk: clk, other: other, y: y, hook: hook}
}

// TestClusterUndoAfterLostRace forces the race the protocol guards against:
// between the peek and the reservation, another instance takes the last
// unit of y. The Take is then denied, and the reservation of x, on another
// node, is undone: x's allowance is as before, for every kind of x.
func TestClusterUndoAfterLostRace(t *testing.T) {
	for _, kind := range algorithms.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			race := newLostRace(t)
			prefix, clk, other, y := race.prefix, race.clk, race.other, race.y
			x := algorithms.Check{Spec: smallSpec(kind), Key: "user-1", Cost: 2}
			ctx := context.Background()
			client := sharedCluster(t)
			hook := race.hook
			client.AddHook(hook)
			undos := &undoRecorder{prefix: prefix}
			client.AddHook(undos)
			s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			before, err := other.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.Take(ctx, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if !hook.hit.Load() {
				t.Fatal("the reservation of y never ran")
			}
			if d[1].Allowed || !d[0].Allowed {
				t.Fatalf("Take(x, y) after losing the race = %+v, want x passing and y denied", d)
			}
			// Only the slot that admitted is undone: y's reserved nothing.
			if got := undos.keys(); len(got) != 1 || got[0] == hook.key {
				t.Fatalf("undo calls for first keys %v, want one, for x's slot (not y's %q)", got, hook.key)
			}
			// x as the first Take left it: its cost-1 peek equals that Take's
			// report minus nothing consumed since (same instant).
			if d[0].Remaining != before[0].Remaining || d[0].ResetAfter != before[0].ResetAfter {
				t.Fatalf("x reports Remaining %d, ResetAfter %s after the undone reservation (decided at the reservation's instant, the first Take's), want %d, %s as before (%+v vs %+v)", d[0].Remaining, d[0].ResetAfter, before[0].Remaining, before[0].ResetAfter, d[0], before[0])
			}
			after, err := other.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if after[0].Remaining != before[0].Remaining-1 {
				t.Fatalf("x after undo: a cost-1 Take reports Remaining %d, want %d (the reservation's 2 units given back)", after[0].Remaining, before[0].Remaining-1)
			}
		})
	}
}

// TestClusterUndoOutlivesTheContext: the caller's context ends after the
// reservations of a cross-slot Take came back and one slot denied: the
// undo of the others still runs, so the denied Take consumes nothing.
func TestClusterUndoOutlivesTheContext(t *testing.T) {
	race := newLostRace(t)
	prefix, clk, other, y := race.prefix, race.clk, race.other, race.y
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1", Cost: 2}
	bg := context.Background()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs(), ContextTimeoutEnabled: true})
	defer client.Close()
	client.AddHook(race.hook)
	client.AddHook(&afterReservationsHook{n: 2, do: cancel})
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(bg, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1}); err != nil { // loads the library
		t.Fatal(err)
	}
	d, err := s.Take(ctx, x, y)
	if err == nil && (d[1].Allowed || !d[0].Allowed) {
		t.Fatalf("Take(x, y) after losing the race = %+v, want x passing and y denied", d)
	}
	if ctx.Err() == nil {
		t.Fatal("the context was not cancelled between the reservations and the undo")
	}
	after, err := other.Take(bg, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after[0].Remaining, int64(5-1-1); got != want {
		t.Fatalf("x after the denied cross-slot Take: a cost-1 Take leaves Remaining %d, want %d (the reservation's 2 units given back)", got, want)
	}
}

// TestClusterOneClientOneSlot: the policy layer namespaces each key with
// its policy's name ("per-second:1.2.3.4"); stacked policies on one client
// key (10 per second and 100 per minute per IP) must land in one slot, so
// that on a Cluster their Take is still one script call: one round trip,
// atomic, no cross-slot phases.
func TestClusterOneClientOneSlot(t *testing.T) {
	_, s, hook := countedCluster(t)
	ctx := context.Background()
	perSecond := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second}
	perMinute := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
	perDay := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1000, Window: 24 * time.Hour}
	for _, ip := range []string{"1.2.3.4", "2001:db8::/64", "user-1", ""} {
		checks := []algorithms.Check{
			{Spec: perSecond, Key: "per-second:" + ip},
			{Spec: perMinute, Key: "per-minute:" + ip},
			{Spec: perDay, Key: "per-day:" + ip},
		}
		if _, err := s.Take(ctx, checks...); err != nil { // may load the library
			t.Fatal(err)
		}
		hook.reset()
		d, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if !d[j].Allowed {
				t.Fatalf("%q: check %d = %+v, want admitted", ip, j, d[j])
			}
		}
		if cmds, _ := hook.snapshot(); len(cmds) != 1 || cmds[0] != "fcall" {
			t.Fatalf("three policies on client %q sent %v, want one fcall (one slot)", ip, cmds)
		}
	}
}

// stallUndoHook holds every undo (script mode 2) until its context ends:
// the node stops answering after it answered the reservation. It records
// in left, if set, the time each undo's context had left when it arrived
// (math.MaxInt64 for one without a deadline).
type stallUndoHook struct {
	redistest.PassHooks
	left chan<- time.Duration
}

func (h stallUndoHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) > 3 && cmd.Name() == "fcall" {
			nk, _ := args[2].(int)
			if len(args) > 3+nk+3 && fmt.Sprint(args[3+nk+3]) == "2" {
				if h.left != nil {
					left := time.Duration(math.MaxInt64)
					if dl, ok := ctx.Deadline(); ok {
						left = time.Until(dl)
					}
					h.left <- left
				}
				<-ctx.Done()
				cmd.SetErr(ctx.Err())
				return ctx.Err()
			}
		}
		return next(ctx, cmd)
	}
}

// TestClusterUndoWithinTimeout: with WithTimeout(d), a cross-slot Take
// whose undo gets no reply fails within the timeout again (not a second
// later: WithTimeout promises prompt failure), and its error says that the
// undo failed, not that Redis never replied. The undo's context is what
// is checked: it reaches Redis with at most the timeout left (an undo
// given its own second, the default, has more), whatever the machine's
// load, which only shortens what is left.
func TestClusterUndoWithinTimeout(t *testing.T) {
	// Long enough for the reservation's reply on a loaded machine (50ms
	// failed there, before the undo).
	const timeout = 200 * time.Millisecond
	race := newLostRace(t)
	prefix, clk, y := race.prefix, race.clk, race.y
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1", Cost: 2}
	bg := context.Background()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs(), ContextTimeoutEnabled: true})
	defer client.Close()
	// The library is loaded on every node by a store with the default
	// timeout: on a loaded machine that can take longer than timeout, which
	// is for the Take below.
	warm, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Take(bg, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix), redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	left := make(chan time.Duration, 4)
	client.AddHook(race.hook)
	client.AddHook(stallUndoHook{left: left})
	_, err = s.Take(bg, x, y)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "undo") {
		t.Fatalf("Take(x, y) with its undo unanswered = %v, want an error saying the undo failed, wrapping context.DeadlineExceeded", err)
	}
	close(left)
	undos := 0
	for l := range left {
		undos++
		if l > timeout {
			t.Errorf("an undo reached Redis with %s left; want at most the %s timeout", l, timeout)
		}
	}
	if undos == 0 {
		t.Fatal("no undo reached Redis")
	}
}

// fcallMode returns the first key of cmd and its script mode (ARGV[4] of
// the wide layout; "c" for a compact plain Take, whose first argument is
// its header, "c ...", or a check's, longer than the wide layout's first,
// TS or empty), when cmd is an FCALL of the store's library with at least
// one key.
func fcallMode(cmd redis.Cmder) (key, mode string, ok bool) {
	args := cmd.Args()
	if len(args) <= 3 || cmd.Name() != "fcall" {
		return "", "", false
	}
	nk, _ := args[2].(int)
	if nk < 1 || len(args) <= 3+nk {
		return "", "", false
	}
	if a := fmt.Sprint(args[3+nk]); strings.HasPrefix(a, "c") || len(a) > 11 {
		return fmt.Sprint(args[3]), "c", true
	}
	if len(args) <= 3+nk+3 {
		return "", "", false
	}
	return fmt.Sprint(args[3]), fmt.Sprint(args[3+nk+3]), true
}

// interceptHook stands for the node in the call of script mode whose first
// key is key, without sending it: it fails the call with err if set, else
// answers reply (a server whose reply is not the script's).
type interceptHook struct {
	redistest.PassHooks
	key, mode string
	err       error
	reply     []any
	hit       atomic.Bool
}

func (h *interceptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && key == h.key && mode == h.mode {
			h.hit.Store(true)
			if h.err != nil {
				cmd.SetErr(h.err)
				return h.err
			}
			if c, ok := cmd.(*redis.Cmd); ok {
				c.SetVal(h.reply)
				return nil
			}
		}
		return next(ctx, cmd)
	}
}

// crossSlot returns a store on a client of its own of the shared cluster,
// under race's prefix and clock, with the library loaded by a cost-1 Take
// of x, and that client.
func crossSlot(t *testing.T, race *lostRace, x algorithms.Check) (*redisstore.Store, *redis.ClusterClient) {
	t.Helper()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1}); err != nil {
		t.Fatal(err)
	}
	return s, client
}

// TestClusterReservationFailureIsTheError: a cross-slot Take whose
// reservation fails on one slot after every slot's peek admitted returns
// that failure (not a decision: the middleware applies its failure mode),
// and the reservation that succeeded on the other slot is undone.
func TestClusterReservationFailureIsTheError(t *testing.T) {
	race := newLostRace(t) // its prefix, clock and y; not its racing hook
	other, y := race.other, race.y
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1", Cost: 2}
	bg := context.Background()
	s, client := crossSlot(t, race, x)
	broken := errors.New("node failed between the phases")
	hook := &interceptHook{key: race.hook.key, mode: "1", err: broken}
	client.AddHook(hook)
	d, err := s.Take(bg, x, y)
	if !hook.hit.Load() {
		t.Fatal("the reservation of y never ran")
	}
	if !errors.Is(err, broken) {
		t.Fatalf("Take(x, y) with y's reservation failed = %+v, %v; want the failure", d, err)
	}
	// The peek of y fails (the checks' second slot, x's peek answered):
	// that failure too is the Take's, not a denial.
	hook.key, hook.mode = race.hook.key, "3"
	hook.hit.Store(false)
	if d, err := s.Take(bg, x, y); !hook.hit.Load() || !errors.Is(err, broken) {
		t.Fatalf("Take(x, y) with y's peek failed (peek reached: %v) = %+v, %v; want the failure", hook.hit.Load(), d, err)
	}
	after, err := other.Take(bg, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after[0].Remaining, int64(5-1-1); got != want {
		t.Fatalf("x after the failed cross-slot Take: a cost-1 Take leaves Remaining %d, want %d (the reservation's 2 units given back)", got, want)
	}
}

// undoRecorder records the first key of every undo (script mode 2) under
// prefix.
type undoRecorder struct {
	redistest.PassHooks
	prefix string
	mu     sync.Mutex
	first  []string
}

func (h *undoRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && mode == "2" && strings.HasPrefix(key, h.prefix+":") {
			h.mu.Lock()
			h.first = append(h.first, key)
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *undoRecorder) keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.first...)
}

// TestClusterMalformedReservationReply: a reservation reply whose trailing
// values (the instant and the undo records) are not what the script sends
// is an error of the Take, never a panic or an admission, and the other
// slot's reservation is undone.
func TestClusterMalformedReservationReply(t *testing.T) {
	race := newLostRace(t) // its prefix, clock and y; not its racing hook
	other, y := race.other, race.y
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, Key: "user-1", Cost: 2}
	bg := context.Background()
	s, client := crossSlot(t, race, x)
	hook := &interceptHook{key: race.hook.key, mode: "1"}
	client.AddHook(hook)
	admitted := []any{int64(2*1 + 1), int64(0), int64(0), int64(0)} // y's decision: admitted, 1 left
	for _, rest := range [][]any{
		{},
		{int64(1), int64(0)},
		{"1", int64(0), int64(0)},
		{int64(1), "0", int64(0)},
		{int64(1), int64(0), "0"},
		{int64(1), int64(0), int64(-1)},
		{int64(1), int64(0), int64(1)},
		{int64(1), int64(0), int64(0), "extra"},
	} {
		hook.reply = append(append([]any(nil), admitted...), rest...)
		d, err := s.Take(bg, x, y)
		if err == nil || !strings.Contains(err.Error(), "reservation reply") {
			t.Errorf("Take(x, y) with y's reservation answered %#v = %+v, %v; want an error about the reservation reply", hook.reply, d, err)
		}
	}
	after, err := other.Take(bg, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after[0].Remaining, int64(100-1-1); got != want {
		t.Fatalf("x after the failed cross-slot Takes: a cost-1 Take leaves Remaining %d, want %d (every reservation given back)", got, want)
	}
}
