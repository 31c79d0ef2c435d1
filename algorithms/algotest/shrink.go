package algotest

import "github.com/ratekeeper/ratekeeper/algorithms"

// Shrink returns a trace made of some of tr's steps (in order, at their
// instants) on which fails still reports true, trying at most budget
// candidates: it first keeps only the steps that can affect the first
// failing step (see Diff), then removes chunks of steps while the failure
// stays (delta debugging), then single checks of multi-check steps. fails
// must report true for tr; it is called on candidates only, each of which it
// must replay on a fresh store.
func Shrink(tr Trace, fails func(Trace) bool, budget int) Trace {
	try := func(c Trace) bool {
		if budget <= 0 {
			return false
		}
		budget--
		c.shrunk = true
		return fails(c)
	}
	// Cut to the shortest failing prefix, then to the steps that reach the
	// pairs of its last step.
	if i := firstFailure(tr, try); i >= 0 {
		if c := tr.subset(tr.relevant(i)); len(c.Steps) < len(tr.Steps) && try(c) {
			tr, tr.shrunk = c, true
		}
	}
	for n := 2; len(tr.Steps) >= 2; {
		n = min(n, len(tr.Steps))
		reduced := false
		for k := 0; k < n; k++ {
			lo, hi := k*len(tr.Steps)/n, (k+1)*len(tr.Steps)/n
			c := tr
			c.Steps = append(append([]Step(nil), tr.Steps[:lo]...), tr.Steps[hi:]...)
			if try(c) {
				tr, reduced = c, true
				tr.shrunk = true
				n = max(n-1, 2)
				break
			}
		}
		if budget <= 0 || (!reduced && n == len(tr.Steps)) {
			break
		}
		if !reduced {
			n *= 2
		}
	}
	// Then drop single checks of multi-check steps.
	for i := 0; i < len(tr.Steps); i++ {
		for j := 0; j < len(tr.Steps[i].Checks) && len(tr.Steps[i].Checks) > 1; {
			c := tr
			c.Steps = append([]Step(nil), tr.Steps...)
			cs := tr.Steps[i].Checks
			c.Steps[i].Checks = append(append([]algorithms.Check(nil), cs[:j]...), cs[j+1:]...)
			if try(c) {
				tr, tr.shrunk = c, true
			} else {
				j++
			}
		}
	}
	return tr
}

// firstFailure returns the index of the last step of the shortest prefix of
// tr on which fails reports true, found by bisection, or -1 when tr has a
// single step.
func firstFailure(tr Trace, fails func(Trace) bool) int {
	lo, hi := 0, len(tr.Steps)-1 // the failure is within Steps[:hi+1]
	if hi < 1 {
		return -1
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		c := tr
		c.Steps = tr.Steps[:mid+1]
		if fails(c) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// subset returns tr with only the steps at the given indices.
func (tr Trace) subset(idx []int) Trace {
	c := tr
	c.Steps = make([]Step, len(idx))
	for i, k := range idx {
		c.Steps[i] = tr.Steps[k]
	}
	return c
}
