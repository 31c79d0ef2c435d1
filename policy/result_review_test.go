package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareEmptyKeyIsMissing: a key function of the application's own
// that returns "" with a nil error (r.Header.Get of a missing header) has
// no key for the request, as keyfunc's Join, FirstOf and Namespace treat
// it. Prepare must answer a *KeyError (or skip the policy), never put every
// such request into the one bucket "name:", which a single client could
// exhaust for everyone (DESIGN: never a silent shared bucket).
func TestPrepareEmptyKeyIsMissing(t *testing.T) {
	userHeader := func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }
	for _, action := range []policy.KeyAction{policy.RejectBadRequest, policy.SkipPolicy} {
		p := policy.Must(policy.PerMinute("per-user", 5, userHeader, policy.OnKeyError(action)))
		s, err := policy.NewSet([]*policy.Policy{p})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		err = s.Prepare(r, s.Match(r), &res)
		switch action {
		case policy.SkipPolicy:
			if err != nil || res.Len() != 0 {
				t.Errorf("%v: Prepare = %v with %d checks (key %q); want the policy skipped", action, err, res.Len(), keyOrNone(&res))
			}
		default:
			var ke *policy.KeyError
			if !errors.As(err, &ke) || !errors.Is(err, keyfunc.ErrNoKey) {
				t.Errorf("%v: Prepare = %v (key %q); want a *KeyError matching keyfunc.ErrNoKey", action, err, keyOrNone(&res))
			}
		}
	}
}

func keyOrNone(res *policy.Result) string {
	if res.Len() == 0 {
		return ""
	}
	return res.Key(0)
}
