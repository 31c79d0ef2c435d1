package redistest

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestReplicaAndSentinel: a replica from NewReplica has synced its master
// (a key written before it started, and one after, with WaitReplicas), and a
// Sentinel from NewSentinel knows both, so that it can fail the master
// over: SENTINEL FAILOVER promotes the replica, which WaitRole and
// WaitMaster see, and ReplicaOf demotes the old master.
func TestReplicaAndSentinel(t *testing.T) {
	master := New(t)
	if _, err := master.Do("SET", "before", "1"); err != nil {
		t.Fatal(err)
	}
	replica := NewReplica(t, master)
	if _, err := master.Do("SET", "after", "2"); err != nil {
		t.Fatal(err)
	}
	if err := master.WaitReplicas(replica); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"before": "1", "after": "2"} {
		if got, err := replica.Do("GET", k); err != nil || got != want {
			t.Errorf("GET %s on the replica = %q, %v; want %q", k, got, err, want)
		}
	}
	if role, err := replica.Role(); err != nil || role != "slave" {
		t.Fatalf("ROLE of the replica = %q, %v; want slave", role, err)
	}
	s := NewSentinel(t, "m", master, SentinelOptions{DownAfter: 200 * time.Millisecond, FailoverTimeout: 2 * time.Second, Replicas: []*Server{replica}})
	if _, err := s.Do("SENTINEL", "FAILOVER", "m"); err != nil {
		t.Fatal(err)
	}
	if err := replica.WaitRole("master"); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitMaster("m", replica); err != nil {
		t.Fatal(err)
	}
	// The old master demoted (the Sentinel would do so, some 20 s later)
	// follows the new one.
	if err := master.ReplicaOf(replica); err != nil {
		t.Fatal(err)
	}
}

// TestReplicatedCluster: each replica of a replicated cluster follows its
// master, and CLUSTER FAILOVER on one swaps the roles, which every node
// then agrees on.
func TestReplicatedCluster(t *testing.T) {
	c := NewReplicatedCluster(t, 2*time.Second)
	for i, r := range c.Replicas {
		if role, err := r.Role(); err != nil || role != "slave" {
			t.Fatalf("ROLE of replica %d = %q, %v; want slave", i, role, err)
		}
		if role, err := c.Masters[i].Role(); err != nil || role != "master" {
			t.Fatalf("ROLE of master %d = %q, %v; want master", i, role, err)
		}
	}
	// CLUSTER FAILOVER (without FORCE) is a manual failover that Redis
	// abandons, saying nothing, when it has not ended within 5 s (the
	// master's clients paused, the replica caught up with it, the masters'
	// votes): on a loaded machine the replica can stay a replica for good
	// (a CI run: "slave" 20 s after the command). Each try gets longer than
	// that; the command is sent again until the replica is promoted, within
	// the guard's bound.
	const manualFailoverTry, manualFailoverTries = 7 * time.Second, 3
	var role string
	var err error
	promoted := false
	for try := 1; try <= manualFailoverTries && !promoted; try++ {
		if _, err := c.Replicas[1].Do("CLUSTER", "FAILOVER"); err != nil {
			t.Fatal(err)
		}
		promoted = hangguard.Poll(manualFailoverTry, 10*time.Millisecond, func() bool {
			role, err = c.Replicas[1].Role()
			return err == nil && role == "master"
		})
		if promoted && try > 1 {
			t.Logf("replica 1 promoted at CLUSTER FAILOVER %d (each abandoned after 5 s)", try)
		}
	}
	if !promoted {
		t.Fatalf("ROLE of replica 1 = %q, %v after %d CLUSTER FAILOVERs, each awaited %v; want master", role, err, manualFailoverTries, manualFailoverTry)
	}
	if err := c.Masters[1].WaitLinkUp(c.Replicas[1]); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConverged(append(c.Masters[:], c.Replicas[:]...)...); err != nil {
		t.Fatal(err)
	}
}
