// Package resultroom lets a package that allocates a policy.Result inside
// a larger object (package middleware: a request's context, its Result and
// its request copy in one allocation) give the Result room for its checks
// and decisions in that same object, sized for the policies that apply,
// so that a request with one policy does not carry the room of four.
package resultroom

import "github.com/ratekeeper/ratekeeper/algorithms"

// Give makes res, a *policy.Result, keep the checks and decisions of up to
// len(checks) policies in checks and decs (of the same length), which
// must live as long as res. A later Prepare of more policies than that
// gives res room of its own. Package policy sets Give when it is
// initialised.
var Give func(res any, checks []algorithms.Check, decs []algorithms.Decision)

// One is the room of one policy.
type One struct {
	Checks    [1]algorithms.Check
	Decisions [1]algorithms.Decision
}

// Two is the room of two policies.
type Two struct {
	Checks    [2]algorithms.Check
	Decisions [2]algorithms.Decision
}

// Three is the room of three policies.
type Three struct {
	Checks    [3]algorithms.Check
	Decisions [3]algorithms.Decision
}

// Four is the room of four policies.
type Four struct {
	Checks    [4]algorithms.Check
	Decisions [4]algorithms.Decision
}
