package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// At the WithMaxKeys bound, a key entering under one Spec may evict the
// same client's state under another Spec when that state is the least used
// (here 1 of 100): only the keys of the entering Take are spared. Sparing
// every entry that shares the entering key's hash, in any table, evicted a
// client at its limit instead, whose next request was then admitted.
func TestMemoryStoreEvictionDoesNotSpareOtherSpecsOfTheEnteringKey(t *testing.T) {
	strict := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Hour}
	loose := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	s, _ := newStore(t, algorithms.WithMaxKeys(2)) // one shard of 2 keys
	full := algorithms.Check{Spec: strict, Key: "at-limit"}
	take(t, s, full, full)
	take(t, s, algorithms.Check{Spec: loose, Key: "x"}) // 1 of 100: the least used key
	if d := take(t, s, algorithms.Check{Spec: strict, Key: "x"}); !d[0].Allowed {
		t.Fatalf("x's first request under the strict spec denied: %+v", d[0])
	}
	if got := s.Len(); got != 2 {
		t.Fatalf("Len = %d, want the bound 2", got)
	}
	if d := take(t, s, full); d[0].Allowed {
		t.Errorf("the client at its limit was admitted: its state was evicted in place of x's least used one")
	}
}
