package algotest_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// offStore is a store whose every decision is wrong in every field.
type offStore struct{ algorithms.Store }

func (s offStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.Store.Take(ctx, checks...)
	for i := range ds {
		d := &ds[i]
		d.Allowed = !d.Allowed
		d.Remaining++
		d.RetryAfter++
		d.ResetAfter++
		d.NextAfter++
		d.Delay++
	}
	return ds, err
}

const boundaryOrderChild = "ALGOTEST_BOUNDARY_ORDER_CHILD"

// TestBoundaryMismatchesInFieldOrder: a boundary step whose decision is
// wrong in several fields reports them in the order of Decision's fields
// (Allowed, Remaining, RetryAfter, ResetAfter, NextAfter, Delay), at every
// step. The boundary cases run, in a child process (they fail there on
// purpose), on a store wrong in every field. The fields were compared in
// the order of a map before: this test failed at every run (of 20 runs;
// some 30 steps check two fields or more).
func TestBoundaryMismatchesInFieldOrder(t *testing.T) {
	if os.Getenv(boundaryOrderChild) == "1" {
		algotest.Run(t, algotest.Harness{New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return offStore{algotest.NewModel().Store(clock)}
		}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoundaryMismatchesInFieldOrder$/^Boundaries$/.*/^alone$", "-test.count=1")
	cmd.Env = append(os.Environ(), boundaryOrderChild+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a store wrong in every field:\n%s", out)
	}
	order := []string{"Allowed", "Remaining", "RetryAfter", "ResetAfter", "NextAfter", "Delay"}
	var groups [][]string // the fields reported for each step, in turn
	last := ""
	for _, m := range regexp.MustCompile(`(step \d+, Take\(.*\) at \+\S+): (\w+) = `).FindAllStringSubmatch(string(out), -1) {
		if m[1] != last {
			groups = append(groups, nil)
			last = m[1]
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m[2])
	}
	several := 0
	for _, g := range groups {
		if len(g) > 1 {
			several++
		}
		if !slices.IsSortedFunc(g, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }) {
			t.Errorf("fields reported in the order %q, want the order of %q", g, order)
		}
	}
	if several < 10 {
		t.Fatalf("%d steps reported two fields or more, want at least 10; output:\n%s", several, out)
	}
}
