// Package resultroom lets a package that allocates a policy.Result inside
// a larger object (package middleware: a request's context, its Result and
// its request copy in one allocation) give the Result room for its checks
// and decisions in that same object, sized for the policies that apply,
// so that a request with one policy does not carry the room of four. The
// rooms' key bytes are what is left of each middleware context's malloc
// size class (see middleware's TestResultContextSizeClass).
package resultroom

import "github.com/ratekeeper/ratekeeper/algorithms"

// A Room holds the checks, decisions and namespaced keys of a
// policy.Result: One, Two, Three or Four.
type Room interface {
	// Parts returns the room's checks and decisions (of the same length)
	// and its key bytes.
	Parts() ([]algorithms.Check, []algorithms.Decision, []byte)
}

// Give makes res, a *policy.Result, keep the checks and decisions of up to
// as many policies as room has in room, and their namespaced keys while
// they fit; room must live as long as res. A later Prepare of more
// policies than that gives res room of its own. Package policy sets Give
// when it is initialised.
var Give func(res any, room Room)

// Copy makes dst, a *policy.Result not in use, a copy of src, a taken
// *policy.Result, with room of its own (allocated) for its checks,
// decisions and guards' store calls: a GiveBack or Refund of the copy
// writes nothing src holds, and src's readers see it as it was. The copy
// shares src's key bytes, which only a Prepare of src writes again: it
// is for use while src is not prepared anew. Package policy sets Copy
// when it is initialised.
var Copy func(dst, src any)

// Decisions returns the decisions of res, a *policy.Result, in place: none
// before it is taken (as policy.Result.Decision returns the zero
// Decision), then one per evaluated policy, in order. They are for
// reading only, until the next Prepare of res. A loop that reads a field
// or two of each decision pays no copy of each, as it would through
// policy.Result.Decision. Package policy sets Decisions when it is
// initialised.
var Decisions func(res any) []algorithms.Decision

// One is the room of one policy, with 56 bytes for the namespaced keys
// ("name:key"); longer ones are allocated.
type One struct {
	Checks    [1]algorithms.Check
	Decisions [1]algorithms.Decision
	Keys      [56]byte
}

// Two is the room of two policies, with 104 bytes for the namespaced keys
// ("name:key"); longer ones are allocated.
type Two struct {
	Checks    [2]algorithms.Check
	Decisions [2]algorithms.Decision
	Keys      [104]byte
}

// Three is the room of three policies, with 88 bytes for the namespaced keys
// ("name:key"); longer ones are allocated.
type Three struct {
	Checks    [3]algorithms.Check
	Decisions [3]algorithms.Decision
	Keys      [88]byte
}

// Four is the room of four policies, with 72 bytes for the namespaced keys
// ("name:key"); longer ones are allocated.
type Four struct {
	Checks    [4]algorithms.Check
	Decisions [4]algorithms.Decision
	Keys      [72]byte
}

// Parts returns r's checks, decisions and key bytes.
func (r *One) Parts() ([]algorithms.Check, []algorithms.Decision, []byte) {
	return r.Checks[:], r.Decisions[:], r.Keys[:]
}

// Parts returns r's checks, decisions and key bytes.
func (r *Two) Parts() ([]algorithms.Check, []algorithms.Decision, []byte) {
	return r.Checks[:], r.Decisions[:], r.Keys[:]
}

// Parts returns r's checks, decisions and key bytes.
func (r *Three) Parts() ([]algorithms.Check, []algorithms.Decision, []byte) {
	return r.Checks[:], r.Decisions[:], r.Keys[:]
}

// Parts returns r's checks, decisions and key bytes.
func (r *Four) Parts() ([]algorithms.Check, []algorithms.Decision, []byte) {
	return r.Checks[:], r.Decisions[:], r.Keys[:]
}
