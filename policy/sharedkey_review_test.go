package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedKeyFunctionCalls pins how often Prepare calls a key function
// that several policies share (the same func value), as its doc says:
// once when it finds a key, which they all reuse; when it fails, the next
// policy sharing it calls it again (a policy skipped for want of a key
// passes on no key to reuse).
func TestSharedKeyFunctionCalls(t *testing.T) {
	calls := 0
	user := keyfunc.Func(func(r *http.Request) (string, error) {
		calls++
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", keyfunc.ErrNoUser
	})
	skip := policy.OnKeyError(policy.SkipPolicy)
	a := policy.Must(policy.PerSecond("a", 5, user, skip))
	b := policy.Must(policy.PerMinute("b", 50, user, skip))
	c := policy.Must(policy.PerHour("c", 500, user, skip))
	s, err := policy.NewSet([]*policy.Policy{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user  string
		calls int
	}{{"ann", 1}, {"", 3}} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.user != "" {
			r.Header.Set("X-User", tc.user)
		}
		calls = 0
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		if calls != tc.calls {
			t.Errorf("user %q: the shared key function was called %d times, want %d", tc.user, calls, tc.calls)
		}
	}
}
