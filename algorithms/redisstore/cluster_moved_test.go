package redisstore_test

import (
	"context"
	"fmt"
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
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// tagOnNode returns a client key "<base>-<n>" whose slot the shared
// cluster's node node (0, 1, 2: slots 0-5460, 5461-10922, 10923-16383)
// serves, on a slot none of keysOnThreeSlots is on, and that slot.
func tagOnNode(t *testing.T, client *redis.ClusterClient, base string, node int) (string, int) {
	t.Helper()
	ctx := context.Background()
	taken := map[int64]bool{}
	for _, k := range keysOnThreeSlots() {
		sl, err := client.ClusterKeySlot(ctx, "{"+k+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		taken[sl] = true
	}
	for n := range 1000 {
		k := fmt.Sprintf("%s-%d", base, n)
		sl, err := client.ClusterKeySlot(ctx, "{"+k+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		if int(sl)*3/16384 == node && !taken[sl] {
			return k, int(sl)
		}
	}
	t.Fatalf("no key %s-N on node %d", base, node)
	return "", 0
}

// moveSlot moves slot from the shared cluster's node src to node dst, its
// keys with it, as redis-cli --cluster reshard does (SETSLOT IMPORTING and
// MIGRATING, MIGRATE, then SETSLOT NODE on every node), behind the back of
// every client: a client's slot map still sends the slot to src, which
// answers MOVED.
func moveSlot(t *testing.T, slot, src, dst int) {
	t.Helper()
	nodes := clusterSrv.Nodes
	do := mustDo(t)
	sl := strconv.Itoa(slot)
	srcID, dstID := do(nodes[src], "CLUSTER", "MYID"), do(nodes[dst], "CLUSTER", "MYID")
	do(nodes[dst], "CLUSTER", "SETSLOT", sl, "IMPORTING", srcID)
	do(nodes[src], "CLUSTER", "SETSLOT", sl, "MIGRATING", dstID)
	if keys := do(nodes[src], "CLUSTER", "GETKEYSINSLOT", sl, "1000"); keys != "" {
		do(nodes[src], append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(nodes[dst].Port), "", "0", "5000", "KEYS"}, strings.Split(keys, "\n")...)...)
	}
	// dst takes the slot with a config epoch above every node's (it
	// bumps its own unless it believes it holds the highest), or a claim
	// of the slot src gossiped before it let it go would win it back:
	// wait until dst has heard of every node's epoch (the last move's
	// bump, on another node, may not have reached it yet).
	epoch := func(n *redistest.Server, field string) int {
		for line := range strings.Lines(do(n, "CLUSTER", "INFO")) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
				e, _ := strconv.Atoi(v)
				return e
			}
		}
		t.Fatalf("no %s in CLUSTER INFO of %s", field, n.Addr)
		return 0
	}
	if !hangguard.Poll(5*time.Second, time.Millisecond, func() bool {
		known := epoch(nodes[dst], "cluster_current_epoch")
		for _, n := range nodes {
			if epoch(n, "cluster_my_epoch") > known {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("node %s did not learn every node's config epoch", nodes[dst].Addr)
	}
	for _, i := range []int{dst, src, 3 - src - dst} {
		do(nodes[i], "CLUSTER", "SETSLOT", sl, "NODE", dstID)
	}
}

// movedLog records, per node address, the MOVED replies the node clients
// of a cluster client get (the cluster client follows them).
type movedLog struct {
	redistest.PassHooks
	mu    sync.Mutex
	moved map[string]int
	calls map[string]int // the store's script calls (FCALL, EVALSHA, EVAL) per node
}

func newMovedLog(client *redis.ClusterClient) *movedLog {
	l := &movedLog{moved: map[string]int{}, calls: map[string]int{}}
	client.OnNewNode(func(nc *redis.Client) {
		addr := nc.Options().Addr
		nc.AddHook(nodeHook{l, addr})
	})
	return l
}

type nodeHook struct {
	*movedLog
	addr string
}

func (h nodeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.mu.Lock()
		defer h.mu.Unlock()
		switch cmd.Name() {
		case "fcall", "evalsha", "eval":
			h.calls[h.addr]++
		}
		if err != nil && strings.HasPrefix(err.Error(), "MOVED ") {
			h.moved[h.addr]++
		}
		return err
	}
}

func (h nodeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range cmds {
			if e := c.Err(); e != nil && strings.HasPrefix(e.Error(), "MOVED ") {
				h.moved[h.addr]++
			}
		}
		return err
	}
}

// take returns the MOVED replies and script calls per node since the last
// take, and forgets them.
func (l *movedLog) take() (moved, calls map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	moved, calls = l.moved, l.calls
	l.moved, l.calls = map[string]int{}, map[string]int{}
	return moved, calls
}

// beforeCall runs do once, before the first script call of mode (see
// fcallMode) whose first key is key.
type beforeCall struct {
	redistest.PassHooks
	key, mode string
	do        func()
	once      sync.Once
	hit       atomic.Bool
}

func (h *beforeCall) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && key == h.key && mode == h.mode {
			h.once.Do(func() { h.do(); h.hit.Store(true) })
		}
		return next(ctx, cmd)
	}
}

// movedRun is a client and store of splitTakeMoved, with the checks it
// took and m's key.
type movedRun struct {
	ctx    context.Context
	spec   algorithms.Spec
	mc, zc algorithms.Check
	mKey   string
	client *redis.ClusterClient
	log    *movedLog
	s      *redisstore.Store
}

// splitTakeMoved makes a store on a client of the shared cluster with
// maxRedirects, has it Take m (2 units) and z (1) once, so that the client
// has its slot map, then moves m's slot (mSlot) from node 0 to node 1 just
// before the phase's call of m (peek, reserve, or undo: then another
// instance takes z's last units, 8 before the Take and 1 racing its
// reservation, so that the Take is denied and m's reservation undone),
// and returns the Take's outcome. The slot moves back when the test ends.
func splitTakeMoved(t *testing.T, shared *redis.ClusterClient, m, z string, mSlot int, phase string, maxRedirects int) (movedRun, []algorithms.Decision, error) {
	t.Helper()
	prefix := uniquePrefix(t)
	clk := algotest.NewClock(algotest.Base)
	r := movedRun{ctx: context.Background(), spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}}
	r.mc, r.zc = algorithms.Check{Spec: r.spec, Key: m, Cost: 2}, algorithms.Check{Spec: r.spec, Key: z}
	r.mKey = fmt.Sprintf("%s:{%s}:fw:10:3600000000000:0:0:0", prefix, m)
	zKey := fmt.Sprintf("%s:{%s}:fw:10:3600000000000:0:0:0", prefix, z)
	other, err := redisstore.New(shared, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	r.client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs(), ClusterStateReloadInterval: time.Hour, MaxRedirects: maxRedirects})
	t.Cleanup(func() { r.client.Close() })
	r.log = newMovedLog(r.client)
	if r.s, err = redisstore.New(r.client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix)); err != nil {
		t.Fatal(err)
	}
	if d, err := r.s.Take(r.ctx, r.mc, r.zc); err != nil || !d[0].Allowed || !d[1].Allowed {
		t.Fatalf("first Take = %+v, %v", d, err)
	}
	hook := &beforeCall{key: r.mKey, do: func() {
		moveSlot(t, mSlot, 0, 1)
		t.Cleanup(func() { moveSlot(t, mSlot, 1, 0) })
	}}
	switch phase {
	case "peek":
		hook.mode = "3"
	case "reserve":
		hook.mode = "1"
	case "undo":
		hook.mode = "2"
		if d, err := other.Take(r.ctx, algorithms.Check{Spec: r.spec, Key: z, Cost: 8}); err != nil || !d[0].Allowed {
			t.Fatalf("other's Take of z = %+v, %v", d, err)
		}
		r.client.AddHook(&beforeCall{key: zKey, mode: "1", do: func() {
			if d, err := other.Take(r.ctx, r.zc); err != nil || !d[0].Allowed {
				t.Errorf("racing Take of z = %+v, %v", d, err)
			}
		}})
	}
	r.client.AddHook(hook)
	r.log.take()
	d, err := r.s.Take(r.ctx, r.mc, r.zc)
	if !hook.hit.Load() {
		t.Fatalf("the %s call of m never ran (Take = %+v, %v)", phase, d, err)
	}
	return r, d, err
}

// TestClusterSplitTakeFollowsMovedSlot: a cross-slot Take on a client
// whose slot map is stale (one of its slots moved to another node behind
// the client's back) in the middle of each of its phases: before its peek,
// before its reservations, or before the undo of a reservation after it
// lost a race on its other slot. The old node answers that part MOVED;
// go-redis follows the redirection (the store's calls, even the undo sent
// at most once, are redirected: a MOVED reply means the call did not run)
// and reloads its slot map. So the Take decides as without the move, all
// or nothing (each key counts what the Takes admitted), the state moved
// with the slot; and the next call of the slot goes straight to its new
// node.
func TestClusterSplitTakeFollowsMovedSlot(t *testing.T) {
	shared := sharedCluster(t)
	m, mSlot := tagOnNode(t, shared, "moved", 0)
	z, _ := tagOnNode(t, shared, "stays", 2)
	for _, phase := range []string{"peek", "reserve", "undo"} {
		t.Run(phase, func(t *testing.T) {
			wantAdmitted := phase != "undo" // z's last units raced away: m's reservation undone
			r, d, err := splitTakeMoved(t, shared, m, z, mSlot, phase, 0)
			ctx, s, client, log, mKey, spec, mc, zc := r.ctx, r.s, r.client, r.log, r.mKey, r.spec, r.mc, r.zc
			if err != nil {
				t.Fatalf("Take with m's slot moved before its %s = %v", phase, err)
			}
			if d[0].Allowed != true || d[1].Allowed != wantAdmitted {
				t.Fatalf("Take with m's slot moved before its %s = %+v, want m admitted, z admitted %v", phase, d, wantAdmitted)
			}
			moved, _ := log.take()
			old, dst := clusterSrv.Nodes[0].Addr, clusterSrv.Nodes[1].Addr
			if moved[old] == 0 {
				t.Fatalf("no MOVED from the slot's old node %s (MOVED per node: %v): the client's map was not stale", old, moved)
			}
			// The client reloads its map (in the background): m's slot
			// is the new node's.
			if !hangguard.Poll(5*time.Second, time.Millisecond, func() bool {
				nc, err := client.MasterForKey(ctx, mKey)
				return err == nil && nc.Options().Addr == dst
			}) {
				nc, err := client.MasterForKey(ctx, mKey)
				t.Fatalf("the client's map still sends m's slot to %v (%v), want %s", nc.Options().Addr, err, dst)
			}
			if _, err := s.Take(ctx, mc); err != nil {
				t.Fatal(err)
			}
			moved, calls := log.take()
			if len(moved) != 0 || calls[dst] != 1 || len(calls) != 1 {
				t.Fatalf("the Take of m after the reload: MOVED %v, script calls %v; want one call, to %s", moved, calls, dst)
			}
			// All or nothing: m counted 2 for each Take admitted with it
			// (the first, the last, and the split one if admitted), z 1
			// (and, racing, the other instance's 8 and 1).
			peek := make([]algorithms.Decision, 2)
			if err := s.Peek(ctx, peek, []algorithms.Check{{Spec: spec, Key: m}, zc}); err != nil {
				t.Fatal(err)
			}
			wantM, wantZ := int64(10-2-2), int64(10-1)
			if wantAdmitted {
				wantM, wantZ = wantM-2, wantZ-1
			} else {
				wantZ = 0
			}
			if peek[0].Remaining != wantM || peek[1].Remaining != wantZ {
				t.Fatalf("after the Takes, m has %d remaining, z %d; want %d and %d", peek[0].Remaining, peek[1].Remaining, wantM, wantZ)
			}
		})
	}
}

// TestClusterSplitTakeMovedNoRedirects: as
// TestClusterSplitTakeFollowsMovedSlot, on a client that follows no
// redirection (MaxRedirects -1): the MOVED reply is the error of m's part,
// and so of the Take; go-redis still reloads its slot map on it, so the
// next call goes to the new node. Moved before the peek, nothing was
// consumed; before the reservations, z's reservation is undone (m's did
// not run); before the undo of m's reservation (the Take lost its race on
// z), the undo fails, and m's reservation stays consumed, erring towards
// denying, as after an undo that gets no reply.
func TestClusterSplitTakeMovedNoRedirects(t *testing.T) {
	shared := sharedCluster(t)
	m, mSlot := tagOnNode(t, shared, "moved", 0)
	z, _ := tagOnNode(t, shared, "stays", 2)
	for _, phase := range []string{"peek", "reserve", "undo"} {
		t.Run(phase, func(t *testing.T) {
			wantM, wantZ := int64(10-2), int64(10-1) // nothing consumed by the failed Take
			if phase == "undo" {
				wantM, wantZ = 10-2-2, 0 // m's reservation stays
			}
			r, d, err := splitTakeMoved(t, shared, m, z, mSlot, phase, -1)
			ctx, s, client, log, mKey, spec, zc := r.ctx, r.s, r.client, r.log, r.mKey, r.spec, r.zc
			if err == nil || !strings.Contains(err.Error(), "MOVED") {
				t.Fatalf("Take with m's slot moved before its %s = %+v, %v; want the MOVED error", phase, d, err)
			}
			t.Logf("Take with m's slot moved before its %s: %v", phase, err)
			dst := clusterSrv.Nodes[1].Addr
			if !hangguard.Poll(5*time.Second, time.Millisecond, func() bool {
				nc, err := client.MasterForKey(ctx, mKey)
				return err == nil && nc.Options().Addr == dst
			}) {
				nc, err := client.MasterForKey(ctx, mKey)
				t.Fatalf("the client's map still sends m's slot to %v (%v), want %s", nc.Options().Addr, err, dst)
			}
			peek := make([]algorithms.Decision, 2)
			if err := s.Peek(ctx, peek, []algorithms.Check{{Spec: spec, Key: m}, zc}); err != nil {
				t.Fatal(err)
			}
			if peek[0].Remaining != wantM || peek[1].Remaining != wantZ {
				t.Fatalf("after the failed Take, m has %d remaining, z %d; want %d and %d", peek[0].Remaining, peek[1].Remaining, wantM, wantZ)
			}
			if moved, _ := log.take(); moved[clusterSrv.Nodes[0].Addr] != 1 || len(moved) != 1 {
				t.Fatalf("MOVED per node %v, want one, from the old node", moved)
			}
		})
	}
}

// mustDo returns a function that sends a command to one server of a test's
// cluster and returns its reply, failing the test on an error.
func mustDo(t *testing.T) func(s *redistest.Server, args ...string) string {
	return func(s *redistest.Server, args ...string) string {
		t.Helper()
		v, err := s.Do(args...)
		if err != nil {
			t.Fatalf("%v on %s: %v", args, s.Addr, err)
		}
		return v
	}
}
