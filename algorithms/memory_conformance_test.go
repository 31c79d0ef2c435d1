package algorithms_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestMemoryStoreConformance runs the conformance suite against MemoryStore.
func TestMemoryStoreConformance(t *testing.T) {
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return newMemoryStore(t, algorithms.WithClock(clock))
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return newMemoryStore(t, algorithms.WithClock(clock), algorithms.WithMaxKeys(maxKeys))
		},
	})
}

func newMemoryStore(t *testing.T, opts ...algorithms.MemoryOption) *algorithms.MemoryStore {
	t.Helper()
	s, err := algorithms.NewMemoryStore(opts...)
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
