package policy

import (
	"errors"
	"fmt"
	"iter"
	"strconv"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrConfig is matched by every *Error: a policy or set that is
	// misconfigured.
	ErrConfig = errors.New("policy: invalid configuration")
	// ErrKey is matched by every *KeyError: a request whose key a policy
	// could not extract.
	ErrKey = errors.New("policy: no key")
	// ErrCost is matched by every *CostError: a request whose cost a policy
	// cannot admit.
	ErrCost = errors.New("policy: invalid cost")
	// ErrRestartNeeded is matched by the error of a function that applied a
	// [Config]'s policies but not some other setting of it, which takes
	// effect only at restart (middleware.ApplyConfig returns one when the
	// headers or the failure mode change). The Config's policies are in
	// force: package policy/reload treats it as applied, with a warning.
	ErrRestartNeeded = errors.New("policy: settings other than policies take effect only at restart")
)

// An Error reports a configuration problem: which policy (empty for a
// problem with a Set as a whole), which field, and why.
type Error struct {
	Policy string
	Field  string
	Reason string
}

// Error formats e as "policy: \"name\": Field reason".
func (e *Error) Error() string {
	if e.Policy == "" {
		return fmt.Sprintf("policy: %s %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("policy: %q: %s %s", e.Policy, e.Field, e.Reason)
}

// Is reports whether target is ErrConfig.
func (e *Error) Is(target error) bool { return target == ErrConfig }

// Errors returns the *Error values err holds, in order: one *Error, or
// every problem of a call that reports several ([New], [NewSet],
// [Policy.WithLimit], [Policy.WithGuard]: joined, one per line, errors.As
// giving the first only), also through errors that wrap them
// (fmt.Errorf with %w, errors.Join). It is to those what [ConfigErrors]
// is to [Load]'s errors: the list of problems, for a caller that shows
// each of them at a field of its own. Errors of other types are left
// out (that of an Option of the caller's own); nil when there is none.
func Errors(err error) []*Error { return collect[*Error](err) }

// collect returns the errors of type E that err holds, in order,
// unwrapping the others (Unwrap() error and Unwrap() []error) but not
// those of type E.
func collect[E error](err error) []E {
	var out []E
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case E:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, u := range e.Unwrap() {
				walk(u)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

func (p *Policy) errorf(field, format string, args ...any) error {
	return &Error{Policy: p.name, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// appendErrors appends err to errs, each of its errors when it joins
// several (so that a constructor's joined error is one flat list); a nil
// err appends nothing.
func appendErrors(errs []error, err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return append(errs, j.Unwrap()...)
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// A KeyError reports that Policy could not extract the key of a request;
// Err is the key function's error. Action says what the policy does about it.
type KeyError struct {
	Policy *Policy
	Action KeyAction
	Err    error
}

// Error names the policy, the action and the key function's error.
func (e *KeyError) Error() string {
	return fmt.Sprintf("policy: %s: no key (%s): %v", quotedName(e.Policy), e.Action, e.Err)
}

// quotedName returns p's name quoted, or "no policy" for an error made
// without one.
func quotedName(p *Policy) string {
	if p == nil {
		return "no policy"
	}
	return strconv.Quote(p.name)
}

// Unwrap returns the key function's error.
func (e *KeyError) Unwrap() error { return e.Err }

// Is reports whether target is ErrKey.
func (e *KeyError) Is(target error) bool { return target == ErrKey }

// A CostError reports a request whose cost is below 1 or above the capacity
// of Policy: such a request can never be admitted. A cost above the
// capacity of a policy at a lowered limit ([Policy.WithLimit]) that its
// configured capacity holds is not such a cost: the policy denies the
// request ([Result.AboveLimit]), but for a store that cannot peek, whose
// Take returns a CostError naming those policies. When the cost is out of
// range for several of the request's policies, Policy and Cost are the
// first of them in Set order (the one errors.As callers have always read)
// and Others lists the rest, in Set order, each with the cost it charged
// the request: [Set.Prepare] names them all. A policy left out for want of
// a key (SkipPolicy), or whose key could not be extracted, is not among
// them: it did not evaluate the request; nor is one whose key or cost
// function panicked once the request was refused (see [Set.Prepare]).
type CostError struct {
	Policy *Policy
	Cost   int64
	// Others are the request's other policies whose capacity its cost is
	// out of, after Policy in Set order; nil when Policy is the only one.
	Others []PolicyCost
}

// A PolicyCost is a policy and the cost it charged a request.
type PolicyCost struct {
	Policy *Policy
	Cost   int64
}

// All returns an iterator over every policy whose capacity the request's
// cost is out of, with the cost it charged: Policy first, then Others.
func (e *CostError) All() iter.Seq2[*Policy, int64] {
	return func(yield func(*Policy, int64) bool) {
		if !yield(e.Policy, e.Cost) {
			return
		}
		for _, o := range e.Others {
			if !yield(o.Policy, o.Cost) {
				return
			}
		}
	}
}

// Error names each policy with its cost and capacity, Policy first:
// `policy: "a": cost 20 exceeds the capacity 10; "b": cost 20 exceeds the
// capacity 5`.
func (e *CostError) Error() string {
	b := []byte("policy: ")
	for p, cost := range e.All() {
		if len(b) > len("policy: ") {
			b = append(b, "; "...)
		}
		b = append(b, quotedName(p)...)
		b = append(b, ": cost "...)
		b = strconv.AppendInt(b, cost, 10)
		if cost < 1 {
			b = append(b, " is below 1"...)
		} else if p != nil {
			b = append(b, " exceeds the capacity "...)
			b = strconv.AppendInt(b, p.capacity, 10)
		}
	}
	return string(b)
}

// Is reports whether target is ErrCost.
func (e *CostError) Is(target error) bool { return target == ErrCost }
