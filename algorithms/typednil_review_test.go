package algorithms_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestTypedNilRefused: a nil pointer passed as a Store or a Clock (a
// variable never assigned) is refused at construction, as an untyped nil
// is, instead of a nil-pointer panic at the first decision.
func TestTypedNilRefused(t *testing.T) {
	var store *algorithms.MemoryStore
	var clock *algotest.Clock
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 1e9}
	if l, err := algorithms.NewLimiter(store, spec); err == nil || !strings.Contains(err.Error(), "store is nil") {
		t.Errorf("NewLimiter(nil *MemoryStore) = %v, %v; want the error for a nil store", l, err)
	}
	if s, err := algorithms.NewMemoryStore(algorithms.WithClock(clock)); err == nil || !strings.Contains(err.Error(), "clock is nil") {
		t.Errorf("NewMemoryStore(WithClock(nil *algotest.Clock)) = %v, %v; want the error for a nil clock", s, err)
	}
}
