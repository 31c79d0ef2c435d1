package middleware

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestBuiltSetsDropCollected: the sets a middleware built are recorded
// weakly (see startedSet): after many changes of limits, as an adaptive
// controller makes, and a collection, only the sets still held remain
// (the active one, and one a test keeps).
func TestBuiltSetsDropCollected(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Minute}
	p := policy.Must(policy.New("p", spec, func(*http.Request) (string, error) { return "k", nil }))
	m, err := New(store, []*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	kept := m.Set()
	for i := range 200 {
		if err := m.SetLimit("p", int64(1+i%500)); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		n := 0
		m.sets.sets.Range(func(any, any) bool { n++; return true })
		return n
	}
	// (No count before collecting: a collection may come during the
	// loop. A set kept must be recorded, which the end checks.)
	// The cleanups run on their own goroutine after a collection: collect
	// and yield until they have, a bounded number of times.
	for i := 0; i < 1000 && count() > 2; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := count(); n != 2 {
		t.Errorf("%d sets recorded after collections, want 2 (the active one and the one kept)", n)
	}
	if !m.sets.has(kept) || !m.sets.has(m.Set()) || m.sets.has(nil) {
		t.Error("a set still held was dropped, or nil is recorded")
	}
}
