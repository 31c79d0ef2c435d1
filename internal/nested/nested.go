// Package nested gives package middleware the operations of a
// policy.Result that decide a policy nested in another middleware: the
// checks its store calls leave out because a middleware further out
// counted the request under them already, the decisions of those checks
// it merges in after its Take, and what it reads to match its policies
// with those further out. They change a Result's accounting in ways that
// only the code that prepared the Result may (a handler holding the
// middleware's decision of the running request must not), or read states
// that only that code knows how to match, so package policy does not
// export them: it hands them here when it is initialised, as [Ops] of
// *policy.Result, and package middleware takes them with [Of].
//
// This package cannot name policy.Result (policy imports it), hence the
// type parameter: instantiated once, by the caller of Of, the operations
// take a *policy.Result, so that passing them anything else (the
// middleware.Result that holds one) fails to compile.
package nested

import (
	"fmt"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Ops are the nested-middleware operations of R, which is
// *policy.Result. Each is the unexported method of policy.Result it
// names, whose comment in package policy gives its full contract; each
// indexes the evaluated policies as policy.Result.Policy does.
type Ops[R any] struct {
	// DropGuard makes the store calls of res (Take, Peek, Refund,
	// GiveBack) leave out the k-th guard (policy.Policy.Guards) of each
	// policy of mask, a mask over res's Set, until the next Prepare: a
	// middleware further out counted the request under that guard's Spec
	// and key already. Call it after Prepare and before Take
	// (policy.Result.dropGuard).
	DropGuard func(res R, mask uint64, k int)
	// DropOwn makes the store calls of res leave out the check under
	// their own Spec of the guarded policies of mask, a mask over res's
	// Set, until the next Prepare, keeping their guards': a middleware
	// further out counted the request under the policy's own Spec
	// already. Call it after Prepare and before Take
	// (policy.Result.dropOwn).
	DropOwn func(res R, mask uint64)
	// MergeGuard merges d, the decision further out of a guard of the
	// i-th policy that DropGuard left out, into the policy's decision, as
	// if that check had been one of res's. Call it after Take
	// (policy.Result.mergeOuterGuard).
	MergeGuard func(res R, i int, d algorithms.Decision)
	// MergeOwn merges d, the decision further out under the i-th
	// policy's own Spec, which DropOwn left out, into the policy's
	// decision. Call it after Take (policy.Result.mergeOuterOwn).
	MergeOwn func(res R, i int, d algorithms.Decision)
	// Folded reports whether the store calls of res check its i-th
	// policy once, on the state of its first guard judged at its limit,
	// in place of a check under its own Spec and one under that guard
	// (policy.Result.isFolded).
	Folded func(res R, i int) bool
	// DecisionUnder returns the i-th policy's decision under spec alone,
	// and true, when the store call of res checked it under spec (its
	// own Spec or a guard's): that one check's decision, not merged with
	// the others' (policy.Result.decisionUnder).
	DecisionUnder func(res R, i int, spec algorithms.Spec) (algorithms.Decision, bool)
}

// ops holds the Ops that Set was given.
var ops any

// Set makes o the operations that Of returns. Package policy calls it
// when it is initialised, with R *policy.Result.
func Set[R any](o Ops[R]) { ops = o }

// Of returns the operations of R that Set was given. Call it with R
// *policy.Result, once package policy is initialised (a package that
// imports policy may call it in a package-level variable's initialiser);
// it panics for any other R, or before.
func Of[R any]() Ops[R] {
	o, ok := ops.(Ops[R])
	if !ok {
		panic(fmt.Sprintf("nested: Of[%T]: package policy set %T", *new(R), ops))
	}
	return o
}
