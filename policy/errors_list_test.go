package policy_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestErrorsListsEveryProblem: New, NewSet, WithLimit and WithGuard join
// their problems, and errors.As gives the first only; a caller that shows
// each (at a field of its own form) had to walk Unwrap() []error itself,
// through whatever wrapped the error. Errors lists the *Error values, in
// order, through joins and wrappers; a problem of another type (an Option
// of the caller's own) is left out.
func TestErrorsListsEveryProblem(t *testing.T) {
	fields := func(es []*policy.Error) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Field)
		}
		return out
	}
	_, err := policy.New("a b", algorithms.Spec{Algorithm: algorithms.TokenBucket, Window: time.Hour, Burst: -1}, nil)
	want := []string{"Name", "Key", "Spec.Limit", "Spec.Burst"}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"New's error", err},
		{"wrapped with %w", fmt.Errorf("middleware: %w", err)},
		{"wrapped twice, and joined with another", errors.Join(errors.New("other"), fmt.Errorf("reload: %w", fmt.Errorf("middleware: %w", err)))},
	} {
		if got := fields(policy.Errors(c.err)); !slices.Equal(got, want) {
			t.Errorf("%s: Errors gives the fields %q, want %q", c.name, got, want)
		}
	}
	one := &policy.Error{Policy: "p", Field: "Key", Reason: "is nil"}
	if got := policy.Errors(one); len(got) != 1 || got[0] != one {
		t.Errorf("Errors(one *Error) = %v, want it alone", got)
	}
	if got := policy.Errors(nil); got != nil {
		t.Errorf("Errors(nil) = %v, want nil", got)
	}
	if got := policy.Errors(errors.New("policy: not an *Error")); got != nil {
		t.Errorf("Errors(another error) = %v, want nil", got)
	}
	// An Option of the caller's own may return any error: left out.
	mine := errors.New("mine: no")
	_, err = policy.New("p", algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Second}, keyfunc.Global(),
		func(*policy.Policy) error { return mine }, policy.WithCost(nil))
	if got, want := fields(policy.Errors(err)), []string{"Cost", "Spec.Limit"}; !slices.Equal(got, want) || !errors.Is(err, mine) {
		t.Errorf("New with an Option's own error: Errors gives %q (errors.Is mine %v), want %q and mine still matched", got, errors.Is(err, mine), want)
	}

	// NewSet, WithLimit and WithGuard too.
	_, err = policy.NewSet([]*policy.Policy{nil, nil}, nil)
	if got, want := len(policy.Errors(err)), 3; got != want {
		t.Errorf("NewSet(nil, nil; nil option): Errors gives %d, want %d: %v", got, want, err)
	}
	p := policy.Must(policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 20}, keyfunc.Global()))
	_, err = p.WithLimit(2_000_000_000)
	if got, want := fields(policy.Errors(err)), []string{"Spec.Limit", "Spec.Burst"}; !slices.Equal(got, want) {
		t.Errorf("WithLimit(2e9): Errors gives %q, want %q", got, want)
	}
	_, err = p.WithGuard(algorithms.Spec{Algorithm: algorithms.TokenBucket, Window: 0, Burst: -1})
	if got, want := fields(policy.Errors(err)), []string{"Guard.Limit", "Guard.Window", "Guard.Burst"}; !slices.Equal(got, want) {
		t.Errorf("WithGuard(bad): Errors gives %q, want %q", got, want)
	}
}
