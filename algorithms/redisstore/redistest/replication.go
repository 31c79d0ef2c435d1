package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// syncWithin bounds the waits of this file for a server's state (a
// replica's link, a role, a Sentinel's view, a cluster's slots): each is a
// guard against a hang, never a wait that passes time in the code under
// test.
const syncWithin = 20 * time.Second

// StartReplica starts a redis-server in dir (as [Start] does, with the
// extra args) replicating master (--replicaof), and returns once the
// replica reports its link to master up and the first sync done (INFO
// replication: master_link_status:up, master_sync_in_progress:0).
func StartReplica(dir string, master *Server, args ...string) (*Server, error) {
	r, err := Start(dir, append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.Port)}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := r.WaitLinkUp(master); err != nil {
		_ = r.Stop()
		return nil, err
	}
	return r, nil
}

// NewReplica starts a replica of master in tb.TempDir() and stops it in
// tb.Cleanup; it skips or fails tb as [Require] does when there is no
// redis-server.
func NewReplica(tb testing.TB, master *Server, args ...string) *Server {
	tb.Helper()
	Require(tb)
	r, err := StartReplica(tb.TempDir(), master, args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Stop() })
	return r
}

// WaitLinkUp returns once s is a replica of master whose link is up and
// whose sync is done, or an error after about 20 s.
func (s *Server) WaitLinkUp(master *Server) error {
	ok := hangguard.Poll(syncWithin, 10*time.Millisecond, func() bool {
		text, err := s.Do("INFO", "replication")
		return err == nil && hasLine(text, "role:slave") && hasLine(text, "master_port:"+strconv.Itoa(master.Port)) &&
			hasLine(text, "master_link_status:up") && hasLine(text, "master_sync_in_progress:0")
	})
	if !ok {
		text, err := s.Do("INFO", "replication")
		return fmt.Errorf("redistest: %s is not a synced replica of %s within %v (INFO replication %q, %v)", s.Addr, master.Addr, syncWithin, text, err)
	}
	return nil
}

// ReplicaOf makes s a replica of master (REPLICAOF, as a Sentinel demoting
// an old master does) and returns once its link is up and synced
// ([Server.WaitLinkUp]).
func (s *Server) ReplicaOf(master *Server) error {
	if _, err := s.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port)); err != nil {
		return err
	}
	return s.WaitLinkUp(master)
}

// WaitReplicas returns once each of replicas has applied every write s
// (their master) had made when it was called: its slave_repl_offset has
// reached s's master_repl_offset (WAIT would count only the writes of
// its own connection, and Do opens a new one for each command).
func (s *Server) WaitReplicas(replicas ...*Server) error {
	offset := func(srv *Server, field string) (int64, error) {
		text, err := srv.Do("INFO", "replication")
		if err != nil {
			return 0, err
		}
		for l := range strings.Lines(text) {
			if v, ok := strings.CutPrefix(strings.TrimRight(l, "\r\n"), field+":"); ok {
				return strconv.ParseInt(v, 10, 64)
			}
		}
		return 0, fmt.Errorf("redistest: no %s in INFO replication of %s", field, srv.Addr)
	}
	want, err := offset(s, "master_repl_offset")
	if err != nil {
		return err
	}
	for _, r := range replicas {
		var got int64
		if !hangguard.Poll(syncWithin, 5*time.Millisecond, func() bool {
			got, err = offset(r, "slave_repl_offset")
			return err == nil && got >= want
		}) {
			return fmt.Errorf("redistest: replica %s at offset %d (%v), want %d within %v", r.Addr, got, err, want, syncWithin)
		}
	}
	return nil
}

// Role returns the first element of ROLE's reply: "master", "slave" or
// "sentinel".
func (s *Server) Role() (string, error) {
	reply, err := s.Do("ROLE")
	if err != nil {
		return "", err
	}
	role, _, _ := strings.Cut(reply, "\n")
	return role, nil
}

// WaitRole returns once ROLE on s answers role ("master", "slave"), or an
// error after about 20 s.
func (s *Server) WaitRole(role string) error {
	var got string
	var err error
	if hangguard.Poll(syncWithin, 10*time.Millisecond, func() bool {
		got, err = s.Role()
		return err == nil && got == role
	}) {
		return nil
	}
	return fmt.Errorf("redistest: ROLE on %s = %q, %v after %v; want %q", s.Addr, got, err, syncWithin, role)
}

// SentinelOptions configures [StartSentinelWith].
type SentinelOptions struct {
	// DownAfter is the Sentinel's down-after-milliseconds: how long the
	// master may not answer before it is taken for down (and, with quorum
	// 1, failed over). Zero: 5 s.
	DownAfter time.Duration
	// FailoverTimeout is the Sentinel's failover-timeout. Zero: Redis's
	// default (3 minutes).
	FailoverTimeout time.Duration
	// Replicas are the master's replicas: StartSentinelWith returns once
	// the Sentinel lists each as a healthy replica (flags exactly
	// "slave"), so that it could promote one.
	Replicas []*Server
}

// StartSentinelWith is [StartSentinel] with options: a Sentinel on a free
// loopback port, its configuration in dir, monitoring master as
// masterName with quorum 1, so that it alone fails the master over.
func StartSentinelWith(dir, masterName string, master *Server, o SentinelOptions) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	downAfter := o.DownAfter
	if downAfter == 0 {
		downAfter = 5 * time.Second
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sentinel monitor %s 127.0.0.1 %d 1\n", masterName, master.Port)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", masterName, downAfter.Milliseconds())
	if o.FailoverTimeout > 0 {
		fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", masterName, o.FailoverTimeout.Milliseconds())
	}
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, bin: bin, dir: dir, sentinelConf: conf}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := knowsMaster(s, masterName, master); err != nil {
		_ = s.Stop()
		return nil, err
	}
	for _, r := range o.Replicas {
		if err := s.waitReplicaKnown(masterName, r); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// NewSentinel starts a Sentinel as [StartSentinelWith] does, in
// tb.TempDir(), and stops it in tb.Cleanup.
func NewSentinel(tb testing.TB, masterName string, master *Server, o SentinelOptions) *Server {
	tb.Helper()
	Require(tb)
	s, err := StartSentinelWith(tb.TempDir(), masterName, master, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Stop() })
	return s
}

// waitReplicaKnown returns once the Sentinel s lists r among masterName's
// replicas as one it could promote: flags "slave" alone (not down, not
// disconnected), its link to the master up, and INFO read from r itself
// lately (info-refresh below 10 s; until its first INFO from r, a Sentinel
// answers SENTINEL FAILOVER with NOGOODSLAVE).
func (s *Server) waitReplicaKnown(masterName string, r *Server) error {
	var last string
	if hangguard.Poll(syncWithin, 20*time.Millisecond, func() bool {
		reply, err := s.Do("SENTINEL", "REPLICAS", masterName)
		if err != nil {
			return false
		}
		last = reply
		// Do flattens the nested arrays into lines of name, value.
		lines := strings.Split(reply, "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			if lines[i] != "name" || lines[i+1] != r.Addr {
				continue
			}
			f := map[string]string{}
			for j := i + 2; j+1 < len(lines) && lines[j] != "name"; j += 2 {
				f[lines[j]] = lines[j+1]
			}
			refresh, err := strconv.ParseInt(f["info-refresh"], 10, 64)
			return f["flags"] == "slave" && f["master-link-status"] == "ok" && err == nil && refresh < 10000
		}
		return false
	}) {
		return nil
	}
	return fmt.Errorf("redistest: the Sentinel on %s does not list %s as a healthy replica of %q within %v (SENTINEL REPLICAS: %q)", s.Addr, r.Addr, masterName, syncWithin, last)
}

// WaitMaster returns once the Sentinel s gives master's address for
// masterName (after a failover: the promoted replica) and has no failover
// of it in progress (SENTINEL MASTER's flags are "master" alone), or an
// error after about 20 s.
func (s *Server) WaitMaster(masterName string, master *Server) error {
	var err error
	if hangguard.Poll(syncWithin, 10*time.Millisecond, func() bool {
		if err = knowsMaster(s, masterName, master); err != nil {
			return false
		}
		var reply string
		if reply, err = s.Do("SENTINEL", "MASTER", masterName); err != nil {
			return false
		}
		lines := strings.Split(reply, "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			if lines[i] == "flags" {
				if lines[i+1] != "master" {
					err = fmt.Errorf("redistest: the Sentinel on %s flags %q %q", s.Addr, masterName, lines[i+1])
					return false
				}
				return true
			}
		}
		err = fmt.Errorf("redistest: SENTINEL MASTER %s on %s has no flags: %q", masterName, s.Addr, reply)
		return false
	}) {
		return nil
	}
	return err
}

// A ReplicatedCluster is a Redis Cluster of three masters, each with one
// replica, started by this package.
type ReplicatedCluster struct {
	// Masters are the masters as started, serving slots 0-5460,
	// 5461-10922 and 10923-16383; Replicas[i] replicates Masters[i]. A
	// failover swaps their roles, not these fields.
	Masters, Replicas [3]*Server
}

// Addrs returns the addresses of every node, masters first, for
// redis.ClusterOptions.Addrs.
func (c *ReplicatedCluster) Addrs() []string {
	var out []string
	for _, n := range append(c.Masters[:], c.Replicas[:]...) {
		out = append(out, n.Addr)
	}
	return out
}

// Stop stops every node.
func (c *ReplicatedCluster) Stop() {
	for _, n := range append(c.Masters[:], c.Replicas[:]...) {
		if n != nil {
			_ = n.Stop()
		}
	}
}

// NodeID returns s's cluster node id (CLUSTER MYID).
func (s *Server) NodeID() (string, error) { return s.Do("CLUSTER", "MYID") }

// StartReplicatedCluster starts six cluster-enabled servers under dir, with
// a cluster-node-timeout of nodeTimeout: three masters holding the slot
// ranges of [StartCluster], and a replica of each (CLUSTER REPLICATE). It
// returns when every node reports cluster_state:ok and knows six nodes,
// and each replica's link to its master is up and synced.
func StartReplicatedCluster(dir string, nodeTimeout time.Duration) (*ReplicatedCluster, error) {
	c := &ReplicatedCluster{}
	ranges := [3][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	start := func(name string) (*Server, error) {
		nd := filepath.Join(dir, name)
		if err := os.MkdirAll(nd, 0o755); err != nil {
			return nil, err
		}
		return Start(nd, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
	}
	var err error
	for i := range 3 {
		if c.Masters[i], err = start(fmt.Sprintf("master%d", i)); err != nil {
			c.Stop()
			return nil, err
		}
		if c.Replicas[i], err = start(fmt.Sprintf("replica%d", i)); err != nil {
			c.Stop()
			return nil, err
		}
	}
	fail := func(err error) (*ReplicatedCluster, error) {
		c.Stop()
		return nil, err
	}
	for i, n := range c.Masters {
		if _, err := n.Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(ranges[i][0]), strconv.Itoa(ranges[i][1])); err != nil {
			return fail(fmt.Errorf("redistest: ADDSLOTSRANGE on %s: %w", n.Addr, err))
		}
	}
	all := append(c.Masters[:], c.Replicas[:]...)
	for _, n := range all[1:] {
		if _, err := n.Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(all[0].Port)); err != nil {
			return fail(fmt.Errorf("redistest: CLUSTER MEET: %w", err))
		}
	}
	for i, r := range c.Replicas {
		id, err := c.Masters[i].NodeID()
		if err != nil {
			return fail(err)
		}
		// The replica must know the master's id (gossip) before it can
		// replicate it.
		var rerr error
		if !hangguard.Poll(syncWithin, 20*time.Millisecond, func() bool {
			_, rerr = r.Do("CLUSTER", "REPLICATE", id)
			return rerr == nil
		}) {
			return fail(fmt.Errorf("redistest: CLUSTER REPLICATE on %s: %w", r.Addr, rerr))
		}
	}
	for i, r := range c.Replicas {
		if err := r.WaitLinkUp(c.Masters[i]); err != nil {
			return fail(err)
		}
	}
	if err := c.WaitConverged(all...); err != nil {
		return fail(err)
	}
	return c, nil
}

// NewReplicatedCluster starts a replicated cluster in tb.TempDir() and
// stops it in tb.Cleanup; it skips or fails tb as [Require] does when there
// is no redis-server.
func NewReplicatedCluster(tb testing.TB, nodeTimeout time.Duration) *ReplicatedCluster {
	tb.Helper()
	Require(tb)
	c, err := StartReplicatedCluster(tb.TempDir(), nodeTimeout)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// WaitConverged returns once each of nodes reports cluster_state:ok and
// agrees with the others on which node serves every slot, at which config
// epoch, each master at its own (read from CLUSTER NODES: CLUSTER SLOTS
// has no epochs), or an error after about 20 s.
func (c *ReplicatedCluster) WaitConverged(nodes ...*Server) error {
	var last string
	if hangguard.Poll(syncWithin, 20*time.Millisecond, func() bool {
		var first string
		for i, n := range nodes {
			info, err := n.Do("CLUSTER", "INFO")
			if err != nil || !hasLine(info, "cluster_state:ok") {
				last = fmt.Sprintf("%s: %q, %v", n.Addr, info, err)
				return false
			}
			owners, err := slotOwners(n)
			if err != nil {
				last = err.Error()
				return false
			}
			if i == 0 {
				first = owners
			} else if owners != first {
				last = fmt.Sprintf("%s sees %q, %s sees %q", nodes[0].Addr, first, n.Addr, owners)
				return false
			}
		}
		return true
	}) {
		return nil
	}
	return errors.New("redistest: cluster did not converge within " + syncWithin.String() + ": " + last)
}

// slotOwners returns [clusterView] of CLUSTER NODES on n.
func slotOwners(n *Server) (string, error) {
	text, err := n.Do("CLUSTER", "NODES")
	if err != nil {
		return "", err
	}
	return clusterView(text)
}

// clusterView returns, from text (a CLUSTER NODES reply), the masters that
// serve slots with their config epochs and slot ranges, one "addr epoch
// ranges" line each, sorted by address (the nodes' own lines differ in the
// "myself" flag only), or an error when two of them share a config epoch.
//
// The epochs count: a cluster whose nodes agree on the slots' masters may
// still be resolving its masters' epoch collisions (every master of a new
// cluster starts at epoch 0, and each collision moves one to a new epoch,
// a ping at a time). A replica that has not heard its master's new epoch
// when the master is lost asks for the master's slots at the old one, and
// every master denies it the votes ("Failover auth denied ...: slot 0
// epoch (3) > reqEpoch (1)"), until its data is too old for it to fail
// over at all: the cluster stays down (TestClusterViewHasConfigEpochs).
func clusterView(text string) (string, error) {
	var lines []string
	epochs := map[string]string{} // epoch -> the master at it
	for l := range strings.Lines(text) {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		if other, ok := epochs[f[6]]; ok {
			return "", fmt.Errorf("redistest: masters %s and %s are both at config epoch %s", other, addr, f[6])
		}
		epochs[f[6]] = addr
		lines = append(lines, addr+" "+f[6]+" "+strings.Join(f[8:], " "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}
