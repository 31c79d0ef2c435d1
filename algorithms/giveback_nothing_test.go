package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestSlidingGiveBackOfNothingKeepsTheKey: a sliding_window give-back in
// the window after next of the key's, of a Take whose window has passed,
// gives nothing back and must leave the key as it is, as the model and the
// Redis store do. The memory store moved the key on to the give-back's
// window (its counts rolled), so a request at an earlier instant (a clock
// a little behind, or a Take that read the clock before the give-back took
// the lock) was decided at the start of that later window, where the
// count of the window before weighs nothing: 6 units more than the model.
func TestSlidingGiveBackOfNothingKeepsTheKey(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Second}
	t0 := time.Unix(1_800_000_000, 0) // the start of a window
	clock := algotest.NewClock(t0)
	store := newMemoryStore(t, algorithms.WithClock(clock))
	model := algotest.NewModel()
	ctx := t.Context()
	take := func(at time.Duration, cost int64) algorithms.Decision {
		t.Helper()
		clock.Set(t0.Add(at))
		c := algorithms.Check{Spec: spec, Key: "k", Cost: cost}
		got, err := store.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := model.TakeAt(t0.Add(at), c)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] {
			t.Fatalf("Take(cost %d) at %v = %+v, want %+v (the model)", cost, at, got[0], want[0])
		}
		return got[0]
	}
	first := take(500*time.Millisecond, 6) // window 0
	take(1500*time.Millisecond, 3)         // window 1: 6 weigh 3
	// In window 2 the first Take's window 0 no longer weighs: nothing comes back.
	at := 2200 * time.Millisecond
	clock.Set(t0.Add(at))
	waited := at - 500*time.Millisecond
	checks := []algorithms.Check{{Spec: spec, Key: "k", Cost: 6}}
	got := make([]algorithms.Refunded, 1)
	if err := store.GiveBack(ctx, got, checks, []algorithms.Decision{first}, waited); err != nil {
		t.Fatal(err)
	}
	want, err := model.GiveBackAt(t0.Add(at), checks, []algorithms.Decision{first}, waited)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want[0] || got[0].Given {
		t.Fatalf("GiveBack = %+v, want %+v (the model), nothing given", got[0], want[0])
	}
	// Back in window 1, 0.1 s in: 3 + ceil(6·0.9) = 9 units in use.
	take(1100*time.Millisecond, 7)
}
