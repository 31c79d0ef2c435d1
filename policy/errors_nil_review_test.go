package policy_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestErrorsWithoutPolicyDoNotPanic: KeyError and CostError are exported
// with exported fields, and callers make them (a deny hook's test, a
// wrapper); one made without its Policy must still say what it is rather
// than panic in Error (a log line or %v would carry a PANIC= note, a
// direct call would crash).
func TestErrorsWithoutPolicyDoNotPanic(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&policy.KeyError{Err: errors.New("no user")}, `policy: no policy: no key (reject-400): no user`},
		{&policy.CostError{Cost: 9}, `policy: no policy: cost 9`},
		{&policy.CostError{Cost: 0}, `policy: no policy: cost 0 is below 1`},
	} {
		got, panicked := func() (s string, panicked bool) {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%T.Error() panicked: %v", tc.err, v)
					panicked = true
				}
			}()
			return tc.err.Error(), false
		}()
		if !panicked && got != tc.want {
			t.Errorf("%T.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}
