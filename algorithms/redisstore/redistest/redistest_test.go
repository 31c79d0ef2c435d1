package redistest

import (
	"strings"
	"testing"
)

func TestServerStartStopRestart(t *testing.T) {
	s := New(t)
	if got, err := s.Do("SET", "k", "v"); err != nil || got != "OK" {
		t.Fatalf("SET = %q, %v; want OK", got, err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Do("GET", "k"); err != nil || got != "" {
		t.Fatalf("GET after restart = %q, %v; want empty (nothing persisted)", got, err)
	}
}

func TestCluster(t *testing.T) {
	c := NewCluster(t)
	for _, n := range c.Nodes {
		info, err := n.Do("CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Fatalf("CLUSTER INFO on %s = %q, %v", n.Addr, info, err)
		}
	}
}
