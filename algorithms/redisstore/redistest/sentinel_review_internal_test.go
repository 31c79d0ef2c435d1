package redistest

import (
	"strings"
	"testing"
)

// TestStartSentinelKnowsTheMaster: StartSentinel's "returns once the
// Sentinel knows the master" is checked on the reply, not only on its
// being no error: a Sentinel asked for a name it does not monitor answers
// a null array, which Do reads as "" without an error.
func TestStartSentinelKnowsTheMaster(t *testing.T) {
	master := New(t)
	s, err := StartSentinel(t.TempDir(), "rkmaster", master)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	if err := knowsMaster(s, "rkmaster", master); err != nil {
		t.Errorf("the monitored master: %v", err)
	}
	if got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "unknown"); err != nil || got != "" {
		t.Fatalf("Do for an unknown name = %q, %v; the premise (a null reply read as \"\", no error) does not hold", got, err)
	}
	err = knowsMaster(s, "unknown", master)
	if err == nil || !strings.Contains(err.Error(), `master "unknown"`) {
		t.Errorf("a name the Sentinel does not monitor: %v, want an error naming it", err)
	}
}
