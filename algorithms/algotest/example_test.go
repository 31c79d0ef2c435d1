package algotest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// The reference model on the counter table of seed 000: a 30 s sliding
// window counter with limit 5, whose previous window is full.
func ExampleModel() {
	m := algotest.NewModel()
	check := algorithms.Check{
		Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 30 * time.Second},
		Key:  "lot",
	}
	for range 5 { // fill the window [0 s, 30 s)
		if _, err := m.TakeAt(algotest.Base, check); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, at := range []time.Duration{35 * time.Second, 40 * time.Second, 40 * time.Second} {
		ds, err := m.TakeAt(algotest.Base.Add(at), check)
		if err != nil {
			fmt.Println(err)
			return
		}
		d := ds[0]
		fmt.Printf("%v: allowed=%t remaining=%d retry-after=%v next=%v\n", at, d.Allowed, d.Remaining, d.RetryAfter, d.NextAfter)
	}
	// Output:
	// 35s: allowed=false remaining=0 retry-after=1s next=1s
	// 40s: allowed=true remaining=0 retry-after=0s next=2s
	// 40s: allowed=false remaining=0 retry-after=2s next=2s
}

// Comparing a store with the model on a random trace, as the conformance
// suite does: the store reads the manual clock that Replay sets before
// each step.
func ExampleCompareModel() {
	tr := algotest.RandomTrace(42, 500)
	clock := algotest.NewClock(tr.Start)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	diff, err := algotest.CompareModel(context.Background(), store, clock, tr)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d steps, store agrees with the model: %t\n", tr.Len(), diff == "")
	// Output:
	// 500 steps, store agrees with the model: true
}
