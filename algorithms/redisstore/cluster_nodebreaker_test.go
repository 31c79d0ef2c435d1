package redisstore_test

import (
	"context"
	"errors"
	"net"
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

// sendsHook counts, per client key, the commands the client sends that
// name a key of it (a key holding "{key}" among their arguments).
type sendsHook struct {
	redistest.PassHooks
	mu   sync.Mutex
	sent map[string]int
}

func (h *sendsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok {
				if i, j := strings.IndexByte(s, '{'), strings.IndexByte(s, '}'); i >= 0 && j > i {
					h.sent[s[i+1:j]]++
				}
			}
		}
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

// sends returns the number of commands sent naming a key of the client
// key key.
func (h *sendsHook) sends(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent[key]
}

// TestClusterBreakerIsPerNode: on a Cluster the store's circuit breaker
// is one per master node. With one master stopped (no replica to take
// over), the failures of its keys' calls open its circuit only: Takes of
// keys the other masters serve still go to Redis and are decided, while
// Takes of any key of the stopped master's slots return ErrCircuitOpen
// without a command sent. A cross-slot Take that touches the open node
// fails whole before sending anything, nothing counted on the healthy
// nodes. After the cooldown one call probes the stopped node (the other
// nodes' calls are no probes), and its failure opens that node's circuit
// again; once the node is back, a probe closes it.
func TestClusterBreakerIsPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	const cooldown = time.Hour
	cl, client := nodeBreakerCluster(t)
	s, clk := nodeBreakerStore(t, client, 2, cooldown)
	ctx := context.Background()
	sp := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	check := func(key string) algorithms.Check { return algorithms.Check{Spec: sp, Key: key} }
	// Slots: user-2 157, user-3 4284, user-6 25 (node 0); user-0 8415
	// (node 1); user-1 12542, user-5 12410 (node 2).
	down, down2, down3 := check("user-2"), check("user-3"), check("user-6")
	up1, up2, fresh := check("user-0"), check("user-1"), check("user-5")
	take := func(cs ...algorithms.Check) ([]algorithms.Decision, error) {
		var d []algorithms.Decision
		var err error
		hangguard.Run(t, 10*time.Second, "Take", func() { d, err = s.Take(ctx, cs...) })
		return d, err
	}
	var downTaken algorithms.Decision // an admitted Take of down's, for a GiveBack
	for _, c := range []algorithms.Check{down, up1, up2} {
		d, err := take(c)
		if err != nil || !d[0].Allowed {
			t.Fatalf("Take(%s) with every node up = %+v, %v", c.Key, d, err)
		}
		if c == down {
			downTaken = d[0]
		}
	}
	hook := &sendsHook{sent: map[string]int{}}
	client.AddHook(hook)
	if err := cl.Nodes[0].Stop(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := take(down); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Fatalf("Take %d of a key of the stopped node: %v; want its failure", i, err)
		}
	}
	if n := hook.sends(down.Key); n != 2 {
		t.Fatalf("%d commands sent for the two Takes of %s; want 2", n, down.Key)
	}
	for i, c := range []algorithms.Check{up1, up2, up1} {
		if d, err := take(c); err != nil || !d[0].Allowed || d[0].Remaining != 8-int64(i/2) {
			t.Fatalf("Take(%s) of a node that is up, after the stopped node's circuit opened = %+v, %v; want Redis's decision (allowed)", c.Key, d, err)
		}
	}
	for _, c := range []algorithms.Check{down, down2, down3} {
		if _, err := take(c); !errors.Is(err, redisstore.ErrCircuitOpen) || !errors.Is(err, algorithms.ErrCircuitOpen) ||
			!strings.Contains(err.Error(), cl.Nodes[0].Addr) {
			t.Fatalf("Take(%s) of the stopped node's slots after two failures = %v; want ErrCircuitOpen naming the node (%s)", c.Key, err, cl.Nodes[0].Addr)
		}
		if n := hook.sends(c.Key); n != map[string]int{down.Key: 2}[c.Key] {
			t.Fatalf("%d commands sent for %s with its node's circuit open; want none but the two before", n, c.Key)
		}
	}
	// A cross-slot Take of the healthy nodes is decided; one touching
	// the open node fails whole, unsent.
	if d, err := take(up1, up2); err != nil || !d[0].Allowed || !d[1].Allowed {
		t.Fatalf("cross-slot Take(%s, %s) of the nodes that are up = %+v, %v; want both allowed", up1.Key, up2.Key, d, err)
	}
	if _, err := take(fresh, down2); !errors.Is(err, redisstore.ErrCircuitOpen) || !strings.Contains(err.Error(), cl.Nodes[0].Addr) {
		t.Fatalf("cross-slot Take(%s, %s) touching the open node = %v; want ErrCircuitOpen", fresh.Key, down2.Key, err)
	}
	if n := hook.sends(fresh.Key); n != 0 {
		t.Fatalf("%d commands sent for %s by a cross-slot Take refused by the open circuit of another node; want none", n, fresh.Key)
	}
	pk := make([]algorithms.Decision, 1)
	if err := s.Peek(ctx, pk, []algorithms.Check{fresh}); err != nil || pk[0].Remaining != sp.Limit {
		t.Fatalf("Peek(%s) after the refused cross-slot Take = %+v, %v; want %d remaining (nothing counted)", fresh.Key, pk, err, sp.Limit)
	}
	// A GiveBack across slots has no all-or-nothing: the key of the
	// healthy node gets its unit back, the open node's fails unsent.
	d, err := take(up1)
	if err != nil || !d[0].Allowed || d[0].Remaining != 5 {
		t.Fatalf("Take(%s) = %+v, %v; want allowed, 5 remaining", up1.Key, d, err)
	}
	given := make([]algorithms.Refunded, 2)
	if err := s.GiveBack(ctx, given, []algorithms.Check{up1, down}, []algorithms.Decision{d[0], downTaken}, 0); !errors.Is(err, redisstore.ErrCircuitOpen) || !strings.Contains(err.Error(), cl.Nodes[0].Addr) {
		t.Fatalf("GiveBack(%s, %s) with %s's node open = %v; want ErrCircuitOpen (its key's error)", up1.Key, down.Key, down.Key, err)
	}
	if err := s.Peek(ctx, pk, []algorithms.Check{up1}); err != nil || pk[0].Remaining != 6 {
		t.Fatalf("Peek(%s) after the GiveBack = %+v, %v; want 6 remaining (its unit given back)", up1.Key, pk, err)
	}
	if n := hook.sends(down.Key); n != 2 {
		t.Fatalf("%d commands sent for %s after the GiveBack; want the two before only", n, down.Key)
	}
	// The cooldown over, one call probes the stopped node; the others'
	// calls are no probes and change nothing.
	clk.Advance(cooldown)
	if d, err := take(up1); err != nil || !d[0].Allowed {
		t.Fatalf("Take(%s) after the cooldown = %+v, %v; want allowed", up1.Key, d, err)
	}
	if _, err := take(down2); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take(%s) after the cooldown = %v; want the probe's failure", down2.Key, err)
	}
	if n := hook.sends(down2.Key); n != 1 {
		t.Fatalf("%d commands sent for the probe %s; want 1", n, down2.Key)
	}
	for _, c := range []algorithms.Check{down, down3} {
		if _, err := take(c); !errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Fatalf("Take(%s) after the failed probe = %v; want ErrCircuitOpen (open for another cooldown)", c.Key, err)
		}
	}
	if d, err := take(up2); err != nil || !d[0].Allowed {
		t.Fatalf("Take(%s) after the failed probe of another node = %+v, %v; want allowed", up2.Key, d, err)
	}
	// The node back (empty), a probe closes its circuit. go-redis may
	// refuse to dial it for a second after the failed dials (see the
	// package doc, "Failures"): each failed probe waits a cooldown more.
	if err := cl.Nodes[0].Restart(); err != nil {
		t.Fatal(err)
	}
	var last error
	if !hangguard.Poll(20*time.Second, 50*time.Millisecond, func() bool {
		clk.Advance(cooldown)
		_, last = take(down3)
		return last == nil
	}) {
		t.Fatalf("no probe of the restarted node succeeded: last %v", last)
	}
	for _, c := range []algorithms.Check{down, down2} {
		if d, err := take(c); err != nil || !d[0].Allowed {
			t.Fatalf("Take(%s) after a probe closed its node's circuit = %+v, %v; want allowed", c.Key, d, err)
		}
	}
}

// TestClusterBreakerFailoverResumesOnNewMaster: the master of slots
// 0-5460 stops and its circuit opens; once its replica takes its slots
// over, the calls of those slots go to the new master, whose breaker is
// its own, closed: they are decided again without waiting for the old
// master's cooldown (an hour on a clock that never moves), as soon as the
// client's slot map names the new master (the calls the open circuit
// refuses have it reloaded, at most once a second).
func TestClusterBreakerFailoverResumesOnNewMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a replicated cluster and waits for a failover; run without -short")
	}
	c := redistest.NewReplicatedCluster(t, 2*time.Second)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	s, err := redisstore.New(client, redisstore.WithTimeout(slowMachineTimeout), redisstore.WithClock(algotest.NewClock(algotest.Base)),
		redisstore.WithCircuitBreaker(2, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sp := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	down := algorithms.Check{Spec: sp, Key: "user-2"} // slot 157: master 0
	up := algorithms.Check{Spec: sp, Key: "user-1"}   // slot 12542: master 2
	take := func(c algorithms.Check) ([]algorithms.Decision, error) {
		var d []algorithms.Decision
		var err error
		hangguard.Run(t, takeWithin(slowMachineTimeout), "Take", func() { d, err = s.Take(ctx, c) })
		return d, err
	}
	for _, c := range []algorithms.Check{down, up} {
		if d, err := take(c); err != nil || !d[0].Allowed {
			t.Fatalf("Take(%s) with every node up = %+v, %v", c.Key, d, err)
		}
	}
	waitReplicated(t, c.Masters[0], c.Replicas[0])
	if err := c.Masters[0].Stop(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := take(down); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Fatalf("Take %d of a key of the stopped master: %v; want its failure", i, err)
		}
	}
	if _, err := take(down); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take of a key of the stopped master after two failures = %v; want ErrCircuitOpen", err)
	}
	// On a slow run the cluster's own failover (its node timeout, 2 s,
	// passed during the Takes above) may have promoted the replica
	// already: it then refuses a FAILOVER, being a master, and the rest
	// holds the same.
	if _, err := c.Replicas[0].Do("CLUSTER", "FAILOVER", "FORCE"); err != nil && !strings.Contains(err.Error(), "send CLUSTER FAILOVER to a replica") {
		t.Fatal(err)
	}
	var d []algorithms.Decision
	var last error
	if !hangguard.Poll(switchWithin, 50*time.Millisecond, func() bool {
		d, last = take(down)
		return last == nil
	}) {
		t.Fatalf("no Take of the lost master's key decided within %v of the failover (the last: %v); the replica: %s", switchWithin, last, nodeState(c.Replicas[0]))
	}
	if !d[0].Allowed || d[0].Remaining != 8 {
		t.Fatalf("Take(%s) on the new master = %+v; want allowed, 8 remaining (the state replicated)", down.Key, d)
	}
	if d, err := take(up); err != nil || !d[0].Allowed || d[0].Remaining != 8 {
		t.Fatalf("Take(%s) of another master after the failover = %+v, %v; want allowed, 8 remaining", up.Key, d, err)
	}
}

// TestClusterBreakerWithoutSlotMap: a cluster client that has no slot map
// and cannot load one (no node reachable) names no node for a call; the
// store's breaker still counts those calls' failures, and opens: then
// calls return ErrCircuitOpen at once, not each the client's attempt to
// load the map, until the cooldown's probe.
func TestClusterBreakerWithoutSlotMap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: dials are refused
	// The CLUSTER SLOTS sent on a Take's context: its attempt to load
	// the map (the client's own reloads, in the background, are not
	// counted).
	type takeKey struct{}
	loads := &ctxLoads{key: takeKey{}}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	client.OnNewNode(func(c *redis.Client) { c.AddHook(loads) })
	t.Cleanup(func() { _ = client.Close() })
	const cooldown = time.Minute
	s, clk := nodeBreakerStore(t, client, 2, cooldown)
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, Key: "user-2"}
	take := func() error {
		var err error
		hangguard.Run(t, 10*time.Second, "Take", func() { _, err = s.Take(context.WithValue(context.Background(), takeKey{}, true), c) })
		return err
	}
	for i := range 2 {
		if err := take(); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
			t.Fatalf("Take %d with no node reachable = %v; want the failure to load the slot map", i, err)
		}
	}
	if loads.n.Load() == 0 {
		t.Fatal("no CLUSTER SLOTS sent on the failed Takes' context: the test cannot tell a Take that tries to load the slot map")
	}
	n := loads.n.Load()
	if err := take(); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take after two failures to load the slot map = %v; want ErrCircuitOpen", err)
	}
	if d := loads.n.Load() - n; d != 0 {
		t.Fatalf("the Take refused by the open circuit tried %d times to load the slot map; want none", d)
	}
	clk.Advance(cooldown)
	if err := take(); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("the probe after the cooldown = %v; want the failure to load the slot map", err)
	}
	if err := take(); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take after the failed probe = %v; want ErrCircuitOpen", err)
	}
}

// ctxLoads counts the CLUSTER commands (SLOTS, SHARDS) a node client
// tries on a context holding key.
type ctxLoads struct {
	redistest.PassHooks
	key any
	n   atomic.Int64
}

func (h *ctxLoads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "cluster" && ctx.Value(h.key) != nil {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// TestClusterBreakerCrossSlotRefusalHandsProbeOn: a cross-slot Take
// refused by one node's open circuit gives back the probe another node's
// half-open breaker let it be: that node's next call probes it. Master 0
// fails first, then master 1; when master 0's cooldown ends and master
// 1's has not, a Take of a key of each is refused whole, unsent, and the
// next Take of master 0's key is its probe, not ErrCircuitOpen.
func TestClusterBreakerCrossSlotRefusalHandsProbeOn(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	const cooldown = time.Hour
	cl, client := nodeBreakerCluster(t)
	s, clk := nodeBreakerStore(t, client, 1, cooldown)
	sp := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	k0 := algorithms.Check{Spec: sp, Key: "user-2"} // slot 157: node 0
	k1 := algorithms.Check{Spec: sp, Key: "user-0"} // slot 8415: node 1
	take := func(cs ...algorithms.Check) error {
		var err error
		hangguard.Run(t, 10*time.Second, "Take", func() { _, err = s.Take(context.Background(), cs...) })
		return err
	}
	for _, c := range []algorithms.Check{k0, k1} {
		if err := take(c); err != nil {
			t.Fatalf("Take(%s) with every node up: %v", c.Key, err)
		}
	}
	hook := &sendsHook{sent: map[string]int{}}
	client.AddHook(hook)
	for _, n := range cl.Nodes[:2] {
		if err := n.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if err := take(k0); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take(%s) of a stopped node = %v; want its failure", k0.Key, err)
	}
	clk.Advance(cooldown / 2)
	if err := take(k1); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take(%s) of a stopped node = %v; want its failure", k1.Key, err)
	}
	clk.Advance(cooldown / 2) // node 0's cooldown over, node 1's not
	if err := take(k0, k1); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("cross-slot Take(%s, %s) with node 1's circuit open = %v; want ErrCircuitOpen", k0.Key, k1.Key, err)
	}
	if n := hook.sends(k0.Key); n != 1 {
		t.Fatalf("%d commands sent for %s; want the one failure before (the refused Take sends nothing)", n, k0.Key)
	}
	if err := take(k0); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("Take(%s) after the refused cross-slot Take = %v; want the probe's failure (the probe handed on)", k0.Key, err)
	}
	if n := hook.sends(k0.Key); n != 2 {
		t.Fatalf("%d commands sent for %s; want 2 (the probe sent)", n, k0.Key)
	}
}

// nodeBreakerCluster starts a 3-node cluster whose masters go on serving
// their slots once a stopped one is marked failed (after its node timeout,
// 5 s: a slow run's), rather than answer CLUSTERDOWN to every call, and a
// client of it that gives up on a stopped node within 200 ms, with no
// retries.
func nodeBreakerCluster(t *testing.T) (*redistest.Cluster, *redis.ClusterClient) {
	t.Helper()
	cl := redistest.NewCluster(t)
	for _, n := range cl.Nodes {
		if _, err := n.Do("CONFIG", "SET", "cluster-require-full-coverage", "no"); err != nil {
			t.Fatal(err)
		}
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	return cl, client
}

// nodeBreakerStore returns a store on client with a breaker of failures
// and cooldown per master, a timeout of a second, on an injected clock,
// and the clock.
func nodeBreakerStore(t *testing.T, client *redis.ClusterClient, failures int, cooldown time.Duration) (*redisstore.Store, *algotest.Clock) {
	t.Helper()
	clk := algotest.NewClock(algotest.Base)
	s, err := redisstore.New(client, redisstore.WithTimeout(time.Second), redisstore.WithClock(clk), redisstore.WithCircuitBreaker(failures, cooldown))
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}
