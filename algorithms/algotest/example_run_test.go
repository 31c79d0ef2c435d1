package algotest_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// testMemoryStore is the conformance test of a Store, here the in-memory
// one; in the store's own _test.go file it is a Test function:
//
//	func TestConformance(t *testing.T) { ... }
//
// Harness.New makes a fresh store that reads the suite's clock once per
// call and is closed when the test ends; NewBounded, for a store that can
// cap its keys, adds the MaxKeys tests (without it they skip, saying so).
// The tests of a method the store lacks (Peek, Refund, GiveBack, Reset,
// TakeInto, Sweep, Close) skip, saying so.
func testMemoryStore(t *testing.T) {
	newStore := func(t *testing.T, opts ...algorithms.MemoryOption) algorithms.Store {
		store, err := algorithms.NewMemoryStore(opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		return store
	}
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return newStore(t, algorithms.WithClock(clock))
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return newStore(t, algorithms.WithClock(clock), algorithms.WithMaxKeys(maxKeys))
		},
	})
}

// A Store passes the conformance suite when one call of Run, from a Test
// function of its package, passes: testMemoryStore above (which this
// package's tests run, as TestExampleRun).
func ExampleRun() {}
