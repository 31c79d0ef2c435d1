package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestEvictionAnchorsKeysDroppedAsIdle: a key evicted as idle at the
// WithMaxKeys bound (its fixed window, full, had ended at the eviction's
// instant) is decided, when the clock then goes back into that window, at
// the eviction's instant, as a key a sweep dropped is ("Time that goes
// back"): in the window after, its ResetAfter lengthened by the difference,
// not fresh in the window it had filled.
func TestEvictionAnchorsKeysDroppedAsIdle(t *testing.T) {
	s, clock := newStore(t, algorithms.WithMaxKeys(2)) // one shard of 2 keys
	old := algorithms.Check{Spec: perSecond, Key: "old", Cost: 10}
	other := algorithms.Check{Spec: perSecond, Key: "other"}
	take(t, s, old)
	take(t, s, other)
	clock.Advance(1500 * time.Millisecond)
	take(t, s, other) // in use in the window [1 s, 2 s): "old" is the idle one
	take(t, s, algorithms.Check{Spec: perSecond, Key: "new"})
	clock.Set(epoch.Add(900 * time.Millisecond))
	d := take(t, s, algorithms.Check{Spec: perSecond, Key: "old"})[0]
	want := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 9, ResetAfter: 1100 * time.Millisecond, NextAfter: 1100 * time.Millisecond}
	if d != want {
		t.Errorf("Take of the evicted key at 0.9 s = %+v, want %+v (decided at the eviction's 1.5 s)", d, want)
	}
}
