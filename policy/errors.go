package policy

import (
	"errors"
	"fmt"
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

func (p *Policy) errorf(field, format string, args ...any) error {
	return &Error{Policy: p.name, Field: field, Reason: fmt.Sprintf(format, args...)}
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
	return fmt.Sprintf("policy: %q: no key (%s): %v", e.Policy.name, e.Action, e.Err)
}

// Unwrap returns the key function's error.
func (e *KeyError) Unwrap() error { return e.Err }

// Is reports whether target is ErrKey.
func (e *KeyError) Is(target error) bool { return target == ErrKey }

// A CostError reports a request whose cost is below 1 or above the capacity
// of Policy: such a request can never be admitted.
type CostError struct {
	Policy *Policy
	Cost   int64
}

// Error names the policy, the cost and the capacity.
func (e *CostError) Error() string {
	if e.Cost < 1 {
		return fmt.Sprintf("policy: %q: cost %d is below 1", e.Policy.name, e.Cost)
	}
	return fmt.Sprintf("policy: %q: cost %d exceeds the capacity %d", e.Policy.name, e.Cost, e.Policy.capacity)
}

// Is reports whether target is ErrCost.
func (e *CostError) Is(target error) bool { return target == ErrCost }
