package algotest_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestRunOnModel runs the suite against the Model itself: the suite's own
// expectations must hold for the reference.
func TestRunOnModel(t *testing.T) {
	// The model agrees with itself on every trace: one of each is enough.
	t.Setenv(algotest.TracesEnv, "2")
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return algotest.NewModel().Store(clock)
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return algotest.NewModel().Store(clock) // unbounded: trivially never evicts
		},
	})
}

// TestExampleRun runs the code of the whole-file example of Run
// (example_run_test.go) as a Store author would write it, against the
// in-memory store: the documented call works as written. (The in-memory
// store's own conformance tests run the suite in full; two traces of each
// kind are enough here.)
func TestExampleRun(t *testing.T) {
	t.Setenv(algotest.TracesEnv, "2")
	testMemoryStore(t)
}
