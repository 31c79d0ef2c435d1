package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreGiveBackAfterEvictionByACallThatReadTheClockFirst: a Take
// that evicts a key in use reads the clock before it waits for the shard's
// lock, so another call's Take on that key can read a later instant, get
// the lock first and be decided before the eviction forgets it. The
// eviction must still count as after that Take: a GiveBack of it (waited
// measured from before the Take, as the middleware measures it) gives
// nothing to the key made again since, whose state counts only the
// requests after the eviction. (Noted at the evicting call's own, earlier,
// instant, the eviction counted as before the Take, and the GiveBack took
// the Take's 4 units from the new key's 6: 8 more admitted, 14 in the
// window of 10.)
func TestMemoryStoreGiveBackAfterEvictionByACallThatReadTheClockFirst(t *testing.T) {
	const ms = time.Millisecond
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	// The evicting call's key is of a Spec whose window ends before the
	// victim is made again: idle then, its own eviction is not noted, and
	// cannot stand in for the one under test whatever its hash.
	brief := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: ms}
	clk := &hookClock{}
	at := func(d time.Duration) { clk.ns.Store(epoch.Add(d).UnixNano()) }
	at(0)
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(clk), algorithms.WithMaxKeys(1)) // one shard of one key
	if err != nil {
		t.Fatal(err)
	}
	victim := algorithms.Check{Spec: spec, Key: "victim", Cost: 4}
	take(t, s, algorithms.Check{Spec: spec, Key: "victim", Cost: 1})
	at(ms)
	var ds []algorithms.Decision
	clk.hook = func() {
		// The evicting call has read 1 ms and waits for the lock: the
		// victim's Take reads 2 ms and gets it first.
		at(2 * ms)
		ds = take(t, s, victim)
	}
	take(t, s, algorithms.Check{Spec: brief, Key: "other"}) // evicts the victim, in use
	if ds == nil || !ds[0].Allowed {
		t.Fatalf("the victim's Take between the evicting call's clock and its lock = %+v, want admitted", ds)
	}
	at(4 * ms)
	anew := algorithms.Check{Spec: spec, Key: "victim", Cost: 6}
	if d := take(t, s, anew)[0]; !d.Allowed || d.Remaining != 4 {
		t.Fatalf("the victim made again: %+v, want admitted with 4 left (a new key)", d)
	}
	at(5 * ms)
	// Waited from before the Take's clock reading at 2 ms.
	if got := giveBackOne(t, s, victim, ds, 3*ms+time.Nanosecond); got.Given {
		t.Errorf("GiveBack of a Take forgotten by an eviction whose call read the clock before it = %+v, want nothing given (the key is a new one)", got)
	}
	if n := admitsMore(t, s, victim); n != 4 {
		t.Errorf("after 6 on the new key: %d more admitted, want 4", n)
	}
}
