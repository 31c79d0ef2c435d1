package metricset_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// TestOwners: the limits of a policy name are those reported last among
// the owners (middlewares) that have it; one owner removing the name, or
// closed, leaves the name to the others, at their last report, and the
// name goes when no owner has it. report is told each change, and only
// changes.
func TestOwners(t *testing.T) {
	ps := newTallies()
	var told []string
	report := func(l metricset.Limits[*tally], ok bool) {
		if !ok {
			told = append(told, l.Name+" gone")
			return
		}
		if l.Policy == nil || l.Policy.name != l.Name {
			t.Errorf("report of %s with the value %+v", l.Name, l.Policy)
		}
		told = append(told, fmt.Sprintf("%s %d/%d", l.Name, l.Limit, l.Configured))
	}
	limits := func() string {
		var out []string
		for _, l := range ps.AppendLimits(nil) {
			out = append(out, fmt.Sprintf("%s %d/%d", l.Name, l.Limit, l.Configured))
		}
		return strings.Join(out, ", ")
	}
	step := func(what, wantTold, wantLimits string, do func()) {
		t.Helper()
		told = nil
		do()
		if got := strings.Join(told, ", "); got != wantTold {
			t.Errorf("%s: told %q, want %q", what, got, wantTold)
		}
		if got := limits(); got != wantLimits {
			t.Errorf("%s: limits %q, want %q", what, got, wantLimits)
		}
	}
	var old, m metricset.Owner
	step("old built", "a 10/10, b 5/5", "a 10/10, b 5/5", func() {
		ps.SetLimits(&old, "a", 10, 10, report)
		ps.SetLimits(&old, "b", 5, 5, report)
	})
	step("m built", "a 20/20, c 7/7", "a 20/20, b 5/5, c 7/7", func() {
		ps.SetLimits(&m, "a", 20, 20, report)
		ps.SetLimits(&m, "c", 7, 7, report)
	})
	step("old lowers a", "a 8/10", "a 8/10, b 5/5, c 7/7", func() { ps.SetLimits(&old, "a", 8, 10, report) })
	step("old again", "", "a 8/10, b 5/5, c 7/7", func() { ps.SetLimits(&old, "a", 8, 10, report) })
	step("old drops a", "a 20/20", "a 20/20, b 5/5, c 7/7", func() { ps.RemoveLimits(&old, "a", report) })
	step("old has a again", "a 9/10", "a 9/10, b 5/5, c 7/7", func() { ps.SetLimits(&old, "a", 9, 10, report) })
	step("old closed", "a 20/20, b gone", "a 20/20, c 7/7", func() { ps.CloseOwner(&old, report) })
	step("old closed twice", "", "a 20/20, c 7/7", func() { ps.CloseOwner(&old, report) })
	step("m drops a", "a gone", "c 7/7", func() { ps.RemoveLimits(&m, "a", report) })
	step("m closed", "c gone", "", func() { ps.CloseOwner(&m, report) })
	step("m reports again", "c 3/3", "c 3/3", func() { ps.SetLimits(&m, "c", 3, 3, report) })
}

// TestOwnersConcurrent: owners reporting, removing and closing at once
// (run with -race) end with the limits of the owners left, and each
// name's last report told is what it reports.
func TestOwnersConcurrent(t *testing.T) {
	ps := newTallies()
	var mu sync.Mutex
	last := map[string]string{}
	report := func(l metricset.Limits[*tally], ok bool) {
		mu.Lock()
		defer mu.Unlock()
		if ok {
			last[l.Name] = fmt.Sprintf("%d/%d", l.Limit, l.Configured)
		} else {
			delete(last, l.Name)
		}
	}
	keep := new(metricset.Owner)
	ps.SetLimits(keep, "p0", 1, 1, report)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				var o metricset.Owner
				for p := range 3 {
					ps.SetLimits(&o, fmt.Sprint("p", p), int64(100*g+i), 100, report)
				}
				if i%2 == 0 {
					ps.RemoveLimits(&o, "p1", report)
				}
				ps.Get("p2")
				ps.CloseOwner(&o, report)
			}
		})
	}
	wg.Wait()
	if got := ps.AppendLimits(nil); len(got) != 1 || got[0].Name != "p0" || got[0].Limit != 1 {
		t.Errorf("limits left: %+v, want p0's 1 alone", got)
	}
	if fmt.Sprint(last) != "map[p0:1/1]" {
		t.Errorf("last told %v, want map[p0:1/1]", last)
	}
}

// TestStatesSubtract: the transitions of one middleware, counted in its
// own States as well, taken out of the adapter's: the other middleware's
// state remains, whatever state the first was left in, and a middleware
// already counted out (closed) takes nothing out again.
func TestStatesSubtract(t *testing.T) {
	var all, a, b metricset.States
	both := func(own *metricset.States, from, to middleware.State) {
		own.Transition(from, to, nil)
		all.Transition(from, to, nil)
	}
	both(&a, middleware.StateHealthy, middleware.StateFailingOpen)
	both(&a, middleware.StateFailingOpen, middleware.StateFallback)
	both(&b, middleware.StateHealthy, middleware.StateFailingClosed)
	var told metricset.StateValues
	all.Subtract(&a, func(v metricset.StateValues) { told = v })
	want := metricset.StateValues{middleware.StateFailingClosed: 1}
	if got := all.Values(); got != want || told != want {
		t.Errorf("a taken out: %v (told %v), want %v", got, told, want)
	}
	both(&b, middleware.StateFailingClosed, middleware.StateHealthy) // b closed
	all.Subtract(&b, nil)
	if got, want := all.Values(), (metricset.StateValues{middleware.StateHealthy: 1}); got != want {
		t.Errorf("b closed, then taken out: %v, want %v", got, want)
	}
}
