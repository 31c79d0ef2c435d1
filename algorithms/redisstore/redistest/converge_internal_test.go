package redistest

import (
	"strings"
	"testing"
)

// The CLUSTER NODES views of two nodes of a replicated cluster at the
// moment TestClusterFailover killed master 0 in a run that then hung
// (node ids shortened): every node agreed on which master served which
// slots, but master 0 had taken config epoch 3 to resolve its collision
// with master 1 (both at 1), and its replica had not heard of it. The
// replica's failover then asked for slots 0-5460 at epoch 1, which every
// master refused ("Failover auth denied ...: slot 0 epoch (3) > reqEpoch
// (1)") until the replica's data was too old to fail over at all: the
// cluster stayed down.
const (
	master0View = `a59f 127.0.0.1:36395@46395 master - 0 1796537079050 2 connected 10923-16383
b820 127.0.0.1:33657@43657 master - 0 1796537079052 1 connected 5461-10922
f768 127.0.0.1:36633@46633 slave b820 0 1796537078244 1 connected
8d01 127.0.0.1:34853@44853 slave 1ea4 0 1796537079052 3 connected
be76 127.0.0.1:38435@48435 slave a59f 0 1796537078949 2 connected
1ea4 127.0.0.1:42829@52829 myself,master - 0 1796537078000 3 connected 0-5460
`
	replica0View = `1ea4 127.0.0.1:42829@52829 master - 0 1796537079000 1 connected 0-5460
f768 127.0.0.1:36633@46633 slave b820 0 1796537078193 1 connected
a59f 127.0.0.1:36395@46395 master - 0 1796537078890 2 connected 10923-16383
be76 127.0.0.1:38435@48435 slave a59f 0 1796537079092 2 connected
b820 127.0.0.1:33657@43657 master - 0 1796537079000 1 connected 5461-10922
8d01 127.0.0.1:34853@44853 myself,slave 1ea4 0 1796537079000 1 connected
`
	// replica0Settled is replica0View once it heard master 0's epoch.
	replica0Settled = `1ea4 127.0.0.1:42829@52829 master - 0 1796537079000 3 connected 0-5460
f768 127.0.0.1:36633@46633 slave b820 0 1796537078193 1 connected
a59f 127.0.0.1:36395@46395 master - 0 1796537078890 2 connected 10923-16383
be76 127.0.0.1:38435@48435 slave a59f 0 1796537079092 2 connected
b820 127.0.0.1:33657@43657 master - 0 1796537079000 1 connected 5461-10922
8d01 127.0.0.1:34853@44853 myself,slave 1ea4 0 1796537079000 3 connected
`
)

// TestClusterViewHasConfigEpochs: two nodes that agree on the slots'
// masters but not on a master's config epoch have not converged, nor has
// a node that sees two masters at one epoch (a collision not yet
// resolved): a replica that fails over then asks for its master's slots
// at a stale epoch, and no master votes for it.
func TestClusterViewHasConfigEpochs(t *testing.T) {
	m0, err0 := clusterView(master0View)
	r0, err1 := clusterView(replica0Settled)
	if err0 != nil || err1 != nil {
		t.Fatalf("clusterView of settled views: %v, %v; want no error", err0, err1)
	}
	if m0 != r0 {
		t.Fatalf("settled views differ:\n%s\nand\n%s", m0, r0)
	}
	stale, err := clusterView(replica0View)
	if err == nil {
		t.Errorf("clusterView of a view with two masters at config epoch 1 = %q, nil; want an error", stale)
	}
	// Master 0 at epoch 4, not 3: no collision, but not master 0's view.
	other, err := clusterView(strings.Replace(replica0Settled, " 3 connected 0-5460", " 4 connected 0-5460", 1))
	if err != nil {
		t.Fatal(err)
	}
	if other == m0 {
		t.Errorf("views that disagree on master 0's config epoch (3, 4) are the same: %q", m0)
	}
}
