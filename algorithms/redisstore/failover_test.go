package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// cmdLog records the names of the commands a client sends (lower case),
// but for those with which go-redis opens a connection (HELLO, CLIENT
// SETINFO): a connection the pool dials again (one a Take timed out on, on
// a loaded machine) is no command of the store's. A CI run under load
// logged ["fcall" "hello"] for one Take.
type cmdLog struct {
	redistest.PassHooks
	mu    sync.Mutex
	names []string
}

func (h *cmdLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch name := strings.ToLower(cmd.Name()); name {
		case "hello", "client":
		default:
			h.mu.Lock()
			h.names = append(h.names, name)
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// take returns the names recorded since the last take, and forgets them.
func (h *cmdLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.names
	h.names = nil
	return n
}

// dayLimit is a check of limit 3 a day on key: three Takes use its quota
// for the length of any test.
func dayLimit(key string) algorithms.Check {
	return algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 24 * time.Hour}, Key: key}
}

// useQuota takes c's whole quota (its limit), then checks that one more
// Take is denied.
func useQuota(t *testing.T, s *redisstore.Store, c algorithms.Check) {
	t.Helper()
	for i := range c.Spec.Limit + 1 {
		d, err := s.Take(context.Background(), c)
		if err != nil {
			t.Fatalf("Take %d of %q: %v", i, c.Key, err)
		}
		if want := i < c.Spec.Limit; d[0].Allowed != want {
			t.Fatalf("Take %d of %q = %+v, want Allowed %v", i, c.Key, d[0], want)
		}
	}
}

// wantDenied fails t unless a Take of c through s is denied with nothing
// remaining: the quota used before a failover, which replication carried.
func wantDenied(t *testing.T, s *redisstore.Store, c algorithms.Check, when string) {
	t.Helper()
	d, err := s.Take(context.Background(), c)
	if err != nil {
		t.Fatalf("Take of %q %s: %v", c.Key, when, err)
	}
	if d[0].Allowed || d[0].Remaining != 0 {
		t.Fatalf("Take of %q %s = %+v; want denied, 0 remaining (the quota used before)", c.Key, when, d[0])
	}
}

// waitReplicated waits until every write of master reached its replica
// (redistest's WaitReplicas), so that what a failover keeps is known.
func waitReplicated(t *testing.T, master, replica *redistest.Server) {
	t.Helper()
	if err := master.WaitReplicas(replica); err != nil {
		t.Fatal(err)
	}
}

// hasLibrary reports whether srv has the store's function library.
func hasLibrary(t *testing.T, srv *redistest.Server) bool {
	t.Helper()
	list, err := srv.Do("FUNCTION", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(list, "ratekeeper_")
}

// switchWithin bounds the wait for a store to decide again after its
// master was lost: the Sentinel's detection (down-after 200ms), its
// failover and the client's redial take about two seconds; a guard
// against a hang. On a loaded machine (a CI run of every package at once)
// the servers' own failover took over 20 s once; 45 s still fails the
// Cluster's old wait for go-redis's periodic slot reload (60 s).
const switchWithin = 45 * time.Second

// TestSentinelFailover: a store on a Sentinel failover client survives the
// loss of its master. Killed, the master is failed over by the Sentinel to
// its replica; meanwhile every Take fails within its deadline (an error
// the middleware's failure mode applies to, not a hang); then the store
// decides on the promoted replica, without being made again, with the
// state replication carried (a key whose quota was used before is still
// denied), by FCALL alone (the library came with the replication: no
// load, no script), and loads the library on the new master when it is
// gone there (FUNCTION FLUSH). No goroutine outlives the store and client.
//
// Only the Takes of the switch, whose promptness the test checks, run
// under a short bound: a deadline of timeout (300ms) on each one's
// context, which the store's calls and the client's I/O
// (ContextTimeoutEnabled) honour as they do the store's own. The store's
// timeout and the client's dial, read and write timeouts are failure
// bounds (slowMachineTimeout): the Takes before the loss and after the
// switch must decide, and on a loaded machine under -race a Take that
// loads the library (about 120 kB of Lua: the first one, and the one
// after FUNCTION FLUSH) outlasted a 300ms timeout and a 500ms read.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a master, a replica and a Sentinel, and waits for a failover; run without -short")
	}
	master := redistest.New(t)
	replica := redistest.NewReplica(t, master)
	sentinel := redistest.NewSentinel(t, "rkfailover", master, redistest.SentinelOptions{
		DownAfter: 200 * time.Millisecond, FailoverTimeout: 2 * time.Second, Replicas: []*redistest.Server{replica},
	})
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "rkfailover", SentinelAddrs: []string{sentinel.Addr}, ContextTimeoutEnabled: true,
		DialTimeout: slowMachineTimeout, ReadTimeout: slowMachineTimeout, WriteTimeout: slowMachineTimeout,
	})
	defer client.Close()
	log := &cmdLog{}
	client.AddHook(log)
	const timeout = 300 * time.Millisecond // each Take of the switch
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	used, fresh := dayLimit("used"), dayLimit("fresh")
	useQuota(t, s, used)
	waitReplicated(t, master, replica)
	if !hasLibrary(t, replica) {
		t.Fatal("the replica has no library once synced")
	}
	if err := master.Stop(); err != nil {
		t.Fatal(err)
	}

	// The switch: each Take fails, promptly, until one decides.
	var failed int
	var lastErr error
	var slowest time.Duration
	start := time.Now()
	if !hangguard.Poll(switchWithin, 20*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		begin := time.Now()
		_, err := s.Take(ctx, fresh)
		slowest = max(slowest, time.Since(begin))
		if err != nil {
			failed++
			lastErr = err
		}
		return err == nil
	}) {
		t.Fatalf("no Take decided within %v of the master's loss (%d failed, the last with %v)", switchWithin, failed, lastErr)
	}
	t.Logf("decided again %v after the master's loss; %d Takes failed meanwhile (the last: %v), the slowest took %v", time.Since(start), failed, lastErr, slowest)
	// No Take may fail at all: go-redis's retries (a dial refused, the
	// Sentinel asked again) can carry the first over the switch (a CI run
	// decided 210ms after the loss with none failed). Each one that did
	// fail failed promptly (below).
	// Its context's deadline bounds each; the slack is for a loaded
	// machine (-race).
	if slowest > timeout+time.Second {
		t.Errorf("a Take during the switch took %v, want about the %v timeout", slowest, timeout)
	}
	if role, err := replica.Role(); err != nil || role != "master" {
		t.Fatalf("ROLE of the replica = %q, %v; want master (promoted)", role, err)
	}

	log.take()
	wantDenied(t, s, used, "on the promoted replica")
	if got, want := log.take(), []string{"fcall"}; !slices.Equal(got, want) {
		t.Errorf("commands of a Take on the promoted replica = %q, want %q (the replicated library, no load)", got, want)
	}

	// The library lost on the new master: the store loads it there.
	if _, err := replica.Do("FUNCTION", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(context.Background(), fresh)
	if err != nil || !d[0].Allowed {
		t.Fatalf("Take after FUNCTION FLUSH on the new master = %+v, %v; want allowed", d, err)
	}
	if got, want := log.take(), []string{"fcall", "function", "fcall"}; !slices.Equal(got, want) {
		t.Errorf("commands of a Take after FUNCTION FLUSH on the new master = %q, want %q", got, want)
	}
	if !hasLibrary(t, replica) {
		t.Error("the new master has no library after the Take")
	}
}

// TestSentinelDemotedMaster: after a failover, the old master comes back as
// a replica of the new one, with the state and the library replicated
// from it. A store whose client still points at it (a plain client of its
// address) must fail each Take, which the middleware's failure mode then
// applies to, never answer with a decision of that replica: its state is
// a copy that lags, and it cannot count what it admits. That holds when
// the replica has the library (the server refuses a function that may
// write: READONLY), when it has lost it (FUNCTION FLUSH on the new master,
// replicated; or a store of a new version, whose library no server has
// yet: the load is refused, READONLY), and for a user who may not run
// functions (the script). The failover client meanwhile decides on the new
// master, where the quota used before is still used. No Take's promptness
// is checked here: the stores' timeouts and the clients' dial, read and
// write timeouts are failure bounds (slowMachineTimeout), so that the
// Takes that must decide do on a loaded machine (at 500ms, under -race,
// the first Takes, loading the library or the script, could time out),
// and those that must fail fail for what the server answers, not for a
// deadline.
func TestSentinelDemotedMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a master, a replica and a Sentinel, and waits for a failover; run without -short")
	}
	master := redistest.New(t)
	replica := redistest.NewReplica(t, master)
	sentinel := redistest.NewSentinel(t, "rkdemoted", master, redistest.SentinelOptions{
		FailoverTimeout: 2 * time.Second, Replicas: []*redistest.Server{replica},
	})
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	fc := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "rkdemoted", SentinelAddrs: []string{sentinel.Addr}, ContextTimeoutEnabled: true,
		DialTimeout: slowMachineTimeout, ReadTimeout: slowMachineTimeout, WriteTimeout: slowMachineTimeout,
	})
	defer fc.Close()
	prefix := uniquePrefix(t)
	fs, err := redisstore.New(fc, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if err := fc.Do(context.Background(), "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	// Stores whose clients point at the old master's address.
	stale := func(user string) *redisstore.Store {
		var password string
		if user != "" {
			password = "any" // nopass: any password, but go-redis authenticates only with one
		}
		c := redis.NewClient(&redis.Options{Addr: master.Addr, Username: user, Password: password, ContextTimeoutEnabled: true,
			DialTimeout: slowMachineTimeout, ReadTimeout: slowMachineTimeout, WriteTimeout: slowMachineTimeout})
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	old, oldNoFunctions := stale(""), stale("nofunctions")

	used, fresh := dayLimit("used"), dayLimit("fresh")
	useQuota(t, fs, used)
	wantDenied(t, old, used, "on the master")
	wantDenied(t, oldNoFunctions, used, "on the master, as a script")
	waitReplicated(t, master, replica)

	if _, err := sentinel.Do("SENTINEL", "FAILOVER", "rkdemoted"); err != nil {
		t.Fatal(err)
	}
	if err := replica.WaitRole("master"); err != nil {
		t.Fatal(err)
	}
	if err := sentinel.WaitMaster("rkdemoted", replica); err != nil {
		t.Fatal(err)
	}
	// The Sentinel demotes the old master some 20 s later; an operator,
	// at once.
	if err := master.ReplicaOf(replica); err != nil {
		t.Fatal(err)
	}

	wantError := func(s *redisstore.Store, c algorithms.Check, what string) {
		t.Helper()
		d, err := s.Take(context.Background(), c)
		if err == nil {
			t.Errorf("Take of %q %s = %+v, nil; want an error (a decision of a read-only replica)", c.Key, what, d[0])
			return
		}
		t.Logf("Take of %q %s: %v", c.Key, what, err)
	}
	wantError(old, used, "on the demoted master")
	wantError(old, fresh, "on the demoted master")
	wantError(oldNoFunctions, used, "on the demoted master, as a script")
	wantError(oldNoFunctions, fresh, "on the demoted master, as a script")

	// The library lost on the new master, and so on its replica.
	if _, err := replica.Do("FUNCTION", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	if !hangguard.Poll(syncWithinTest, 10*time.Millisecond, func() bool { return !hasLibrary(t, master) }) {
		t.Fatal("FUNCTION FLUSH did not reach the demoted master")
	}
	wantError(old, used, "on the demoted master without the library")
	wantError(old, fresh, "on the demoted master without the library")
	wantError(old, used, "on the demoted master without the library, again") // refused loads are not sent again

	// The failover client decides on the new master. Each Take must
	// return within takeWithin, and one must decide within switchWithin
	// (guards that count the Takes' own time: hangguard.Poll counts
	// calls, each of which may last the store's timeout).
	var failed int
	g := &guardedTakes{t: t, s: fs, perTake: takeWithin(slowMachineTimeout), all: hangguard.New(switchWithin)}
	for {
		r, ok := g.take(context.Background(), fresh)
		if !ok {
			t.Fatalf("the failover client's store decided nothing within %v (%d Takes failed)", switchWithin, failed)
		}
		if r.err == nil {
			break
		}
		failed++
		if !g.pause(20 * time.Millisecond) { // polling the Sentinel's switch, not passing test time
			t.Fatalf("the failover client's store decided nothing within %v (%d Takes failed, the last with %v)", switchWithin, failed, r.err)
		}
	}
	g.all.Stop()
	t.Logf("%d Takes of the failover client's store failed before it decided again", failed)
	wantDenied(t, fs, used, "on the new master")
}

// syncWithinTest bounds a wait for replication to carry a write: a guard
// against a hang.
const syncWithinTest = 10 * time.Second

// triple returns checks of spec on one key of each master's slots of a
// three-master cluster (slots 157, 8283 and 12542: keysOnThreeSlots).
func triple(spec algorithms.Spec) []algorithms.Check {
	var cs []algorithms.Check
	for _, k := range []string{"user-2", "user-4", "user-1"} {
		cs = append(cs, algorithms.Check{Spec: spec, Key: k})
	}
	return cs
}

// guardedTakes runs a store's Takes each on a goroutine of its own, the
// test's goroutine waiting for it under two hangguard Guards: one per
// Take, for a Take that does not return (a hang of the store), and one
// for the whole wait (the switch: a cluster that does not fail over).
// hangguard.Poll bounds its calls, not their time: polling every 20 ms
// for switchWithin (45 s) is 2,250 calls, and with each failing at the
// store's timeout (500 ms) its bound became some 20 minutes: a run whose
// cluster never failed over hit go test's timeout 4 minutes into it
// instead of failing at 45 s (its stack showed each Take returning in
// time, its Poll still calling them).
type guardedTakes struct {
	t       *testing.T
	s       *redisstore.Store
	perTake time.Duration
	all     *hangguard.Guard // nil: no whole-wait bound
}

// takeResult is what a Take returned.
type takeResult struct {
	d   []algorithms.Decision
	err error
}

// take returns what s.Take(ctx, checks...) returns, and true; it fails g.t
// when the Take has not returned within g.perTake, and returns false when
// g.all expires first (the caller says what did not happen in time).
func (g *guardedTakes) take(ctx context.Context, checks ...algorithms.Check) (takeResult, bool) {
	g.t.Helper()
	done := make(chan takeResult, 1)
	go func() {
		d, err := g.s.Take(ctx, checks...)
		done <- takeResult{d, err}
	}()
	one := hangguard.New(g.perTake)
	defer one.Stop()
	var all <-chan time.Time
	if g.all != nil {
		all = g.all.C
	}
	for {
		select {
		case r := <-done:
			return r, true
		case <-one.C:
			if one.Expired() {
				g.t.Fatalf("a Take of %d checks did not return within %v: the store waits without bound", len(checks), g.perTake)
			}
		case <-all:
			if g.all.Expired() {
				return takeResult{}, false
			}
		}
	}
}

// pause waits every, counting g.all's ticks meanwhile, and reports
// whether g.all is still running (a poll's interval, not passing test
// time).
func (g *guardedTakes) pause(every time.Duration) bool {
	tm := time.NewTimer(every)
	defer tm.Stop()
	for {
		select {
		case <-tm.C:
			return true
		case <-g.all.C:
			if g.all.Expired() {
				return false
			}
		}
	}
}

// takeWithin bounds a Take of a store of WithTimeout(timeout) that must
// return: a guard against a hang. A cross-slot Take's calls run within
// its timeout, and the resends and undos of its failed reservations
// within a timeout of their own after them (runSplit): two timeouts; the
// rest is slack for a loaded machine (hangguard counts the process's
// running time).
func takeWithin(timeout time.Duration) time.Duration { return 2*timeout + 5*time.Second }

// nodeState describes a cluster node for a failure message: its ROLE and
// its CLUSTER NODES (which master it sees serve which slots, at which
// config epoch, and which it sees failed).
func nodeState(n *redistest.Server) string {
	role, err := n.Do("ROLE")
	nodes, nerr := n.Do("CLUSTER", "NODES")
	return fmt.Sprintf("%s: ROLE %q (%v), CLUSTER NODES:\n%s (%v)", n.Addr, role, err, nodes, nerr)
}

// wantUsedDenied fails t unless a cross-slot Take of used through g denies
// every check with none remaining (the quota used before). Such a Take
// consumes nothing, so one that the store's timeout ended, on a slow
// machine and a healthy cluster, is made again (a few times): its failing
// promptly is not what the caller checks.
func wantUsedDenied(t *testing.T, g *guardedTakes, used []algorithms.Check, when string) {
	t.Helper()
	const tries = 10
	for i := 1; ; i++ {
		r, _ := g.take(context.Background(), used...)
		if r.err != nil {
			if i < tries && errors.Is(r.err, context.DeadlineExceeded) {
				t.Logf("cross-slot Take of the used keys %s, try %d: %v; again", when, i, r.err)
				continue
			}
			t.Fatalf("cross-slot Take of the used keys %s: %v", when, r.err)
		}
		for _, d := range r.d {
			if d.Allowed || d.Remaining != 0 {
				t.Fatalf("cross-slot Take of the used keys %s = %+v; want all denied (the quota used before)", when, r.d)
			}
		}
		return
	}
}

// TestClusterFailover: a store on a cluster client survives the loss of a
// master of a cluster of three masters with a replica each. The master of
// slots 0-5460 is killed, its replica takes over (CLUSTER FAILOVER FORCE,
// as an operator does at once, rather than after the node timeout);
// meanwhile cross-slot Takes (one check on each master) fail or decide,
// never panic, and keep all or nothing: each of the three keys has
// consumed as many units as the Takes admitted, none more on the
// surviving masters for a reservation on the lost one that failed. Then
// the store decides again through the new master, MOVED redirections
// followed, with the state replication carried. The old master restarts,
// rejoins as a replica of the new one, and a client still pointing at it
// gets an error (MOVED), never a decision of it. The store of the 500ms
// timeout decides before the loss, through the switch and after it; the
// Takes of a healthy cluster that must decide, and whose counts the test
// asserts, go through a store of the same client with a failure bound for
// a timeout (a CI run under load timed out the first of them at 500ms).
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a replicated cluster and waits for a failover; run without -short")
	}
	c := redistest.NewReplicatedCluster(t, 2*time.Second)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: c.Addrs(), ContextTimeoutEnabled: true,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	defer client.Close()
	prefix := uniquePrefix(t)
	const timeout = 500 * time.Millisecond
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The Takes of a healthy cluster, which must decide, go through a
	// store of the same client with a timeout that is a failure bound
	// (slowMachineTimeout): at 500ms, on a loaded machine, the first one
	// (which loads the library on each master) timed out.
	healthy, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer healthy.Close()
	ctx := context.Background()

	used := triple(algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 24 * time.Hour})
	before := &guardedTakes{t: t, s: healthy, perTake: takeWithin(slowMachineTimeout)}
	for i := range 3 {
		r, _ := before.take(ctx, used...)
		d, err := r.d, r.err
		if err != nil {
			t.Fatalf("cross-slot Take %d: %v", i, err)
		}
		for j := range d {
			if !d[j].Allowed {
				t.Fatalf("cross-slot Take %d = %+v, want Allowed", i, d)
			}
		}
	}
	// s decides before the loss too: the used keys, denied.
	wantUsedDenied(t, &guardedTakes{t: t, s: s, perTake: takeWithin(timeout)}, used, "before the failover")
	for i, m := range c.Masters {
		waitReplicated(t, m, c.Replicas[i])
	}
	if err := c.Masters[0].Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Replicas[0].Do("CLUSTER", "FAILOVER", "FORCE"); err != nil {
		t.Fatal(err)
	}

	// Cross-slot Takes through the switch, until one decides; then more.
	// Each Take must return within takeWithin, and one must decide within
	// switchWithin: both guards count the time of the Takes themselves.
	fresh := triple(algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: 24 * time.Hour})
	var admitted, failed int
	var lastErr error
	g := &guardedTakes{t: t, s: s, perTake: takeWithin(timeout)}
	noSwitch := func() {
		t.Helper()
		t.Fatalf("no cross-slot Take decided within %v of the master's loss (%d failed, the last with %v); the replica that was to take over: %s",
			switchWithin, failed, lastErr, nodeState(c.Replicas[0]))
	}
	start := time.Now()
	take := func() bool {
		t.Helper()
		r, ok := g.take(ctx, fresh...)
		if !ok {
			noSwitch()
		}
		if r.err != nil {
			failed++
			lastErr = r.err
			return false
		}
		for j := range r.d {
			if r.d[j].Allowed != r.d[0].Allowed {
				t.Fatalf("a cross-slot Take decided %+v: not all or nothing", r.d)
			}
		}
		if r.d[0].Allowed {
			admitted++
		}
		return true
	}
	g.all = hangguard.New(switchWithin)
	for !take() {
		if !g.pause(20 * time.Millisecond) { // polling the cluster, not passing test time
			noSwitch()
		}
	}
	g.all.Stop()
	g.all = nil
	took := time.Since(start)
	t.Logf("decided again %v after the master's loss; %d Takes failed meanwhile (the last: %v)", took, failed, lastErr)
	// The promotion takes a second or two; the client's slot map must
	// follow it, not wait for its periodic reload (60 s by default).
	if took > 15*time.Second {
		t.Errorf("the store decided again %v after the master's loss, want within seconds of the replica's promotion", took)
	}
	if err := c.WaitConverged(c.Replicas[0], c.Masters[1], c.Masters[2]); err != nil {
		t.Fatal(err)
	}
	// s decides on the used keys as replication carried them; the Takes
	// to be counted, of a healthy cluster, go through healthy (a Take
	// that timed out may have been applied, which the count below would
	// not know).
	wantUsedDenied(t, g, used, "after the failover")
	g = &guardedTakes{t: t, s: healthy, perTake: takeWithin(slowMachineTimeout)}
	for range 3 {
		if !take() {
			t.Fatalf("a cross-slot Take after the failover: %v", lastErr)
		}
	}
	// All or nothing: each key counted the Takes admitted, no more.
	peek := make([]algorithms.Decision, len(fresh))
	if err := s.Peek(ctx, peek, fresh); err != nil {
		t.Fatal(err)
	}
	for j, d := range peek {
		if got, want := d.Remaining, int64(10-admitted); got != want {
			t.Errorf("after the failover, %q has %d remaining, want %d (%d cross-slot Takes admitted, %d failed)", fresh[j].Key, got, want, admitted, failed)
		}
	}

	// The old master comes back: a replica of the one that took over.
	if err := c.Masters[0].Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.Masters[0].WaitLinkUp(c.Replicas[0]); err != nil {
		t.Fatal(err)
	}
	old := redis.NewClient(&redis.Options{Addr: c.Masters[0].Addr, ContextTimeoutEnabled: true, ReadTimeout: 500 * time.Millisecond})
	defer old.Close()
	os, err := redisstore.New(old, redisstore.WithPrefix(prefix), redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Close()
	og := &guardedTakes{t: t, s: os, perTake: takeWithin(timeout)}
	for _, ch := range []algorithms.Check{used[0], fresh[0]} {
		if r, _ := og.take(ctx, ch); r.err == nil {
			t.Errorf("Take of %q through a client of the demoted master = %+v, nil; want an error", ch.Key, r.d)
		} else {
			t.Logf("Take of %q through a client of the demoted master: %v", ch.Key, r.err)
		}
	}
	if !take() {
		t.Fatalf("a cross-slot Take after the old master's return: %v", lastErr)
	}
}
