package client

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The keys forgotten when the record of cuts is over its bound are only
// those nothing waits on: a key whose probe is out, one with requests
// waiting for its probe's answer (the probe handed on among them), and one
// held (its hold in force, the requests asleep on it about to probe) keep
// their cuts, whatever their number beside the idle ones; the idle ones
// go until fewer than half the bound are left.
func TestIdleCutsForgottenOnly(t *testing.T) {
	var cs cuts
	hs := holds{m: map[string]time.Time{}}
	year := now.Add(365 * 24 * time.Hour)
	for k := range 2 * maxIdleCuts {
		cs.extend(fmt.Sprintf("idle-%d", k), year, now, now, &hs)
	}
	later := now.Add(2 * time.Minute)
	cs.extend("probe", year, now, later, &hs)
	if _, role, _ := cs.enter("probe", later, &hs); role != roleProbe {
		t.Fatalf("probe: role %d, want the probe's", role)
	}
	cs.extend("waiting", year, now, later, &hs)
	c, _, _ := cs.enter("waiting", later, &hs)
	w := &probeWaiter{wake: func() {}}
	if !cs.await("waiting", c, w) {
		t.Fatal("waiting: no probe out to wait for")
	}
	cs.abort(c) // the probe ends without an answer: w has the role
	cs.extend("held", year, now, later, &hs)
	hs.m["held"] = later.Add(time.Minute)
	// Keys enough to sweep, each held: the idle ones are forgotten, not
	// the others.
	added := 0
	for k := 0; ; k++ {
		added++
		n := len(cs.m)
		hs.m[fmt.Sprintf("new-%d", k)] = later.Add(time.Minute) // held: not forgotten
		cs.extend(fmt.Sprintf("new-%d", k), year, later.Add(time.Minute), later, &hs)
		if len(cs.m) <= n {
			break // a sweep
		}
	}
	for _, k := range []string{"probe", "waiting", "held"} {
		if cs.m[k] == nil {
			t.Errorf("%s: its cut was forgotten", k)
		}
	}
	idle, held := 0, 0
	for k := range cs.m {
		switch {
		case strings.HasPrefix(k, "idle-"):
			idle++
		case strings.HasPrefix(k, "new-"):
			held++
		}
	}
	if held != added {
		t.Errorf("%d of the %d keys held kept", held, added)
	}
	if idle >= maxIdleCuts/2 {
		t.Errorf("%d idle keys kept, want fewer than %d", idle, maxIdleCuts/2)
	}
	if got := cs.n.Load(); got != int64(len(cs.m)) {
		t.Errorf("the fast path counts %d keys, the record holds %d", got, len(cs.m))
	}
}
