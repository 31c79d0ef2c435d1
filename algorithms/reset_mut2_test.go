package algorithms_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestResetOfAKeyNotHeldCountsNothing: a Reset of a key the store does not
// hold, under a Spec whose table in the key's shard holds another key,
// forgets nothing: Len, which counts towards WithMaxKeys, stays as it was.
func TestResetOfAKeyNotHeldCountsNothing(t *testing.T) {
	for _, k := range algorithms.Kinds {
		t.Run(string(k), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256)) // one shard
			spec := kindSpec(k, 10, 5)
			take(t, s, algorithms.Check{Spec: spec, Key: "held"})
			if err := s.Reset(t.Context(), algorithms.Check{Spec: spec, Key: "absent"}); err != nil {
				t.Fatal(err)
			}
			if got := s.Len(); got != 1 {
				t.Errorf("Len after a Reset of a key not held = %d, want 1", got)
			}
		})
	}
}
