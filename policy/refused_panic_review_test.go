package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareRefusedForCostSurvivesLaterPanics: once one policy's cost is
// out of range the request is refused, and Prepare looks over the later
// policies only to name them in the *CostError. A key or cost function
// of a later policy that panics on that request must not turn the
// refusal (a 429 naming the policies) into a panic: the policy is passed
// over, unnamed, and the others are still named. Before the refusal a
// panic propagates as it always did: Prepare hides no bug of a request
// it would admit.
func TestPrepareRefusedForCostSurvivesLaterPanics(t *testing.T) {
	addr := keyfunc.Func(func(r *http.Request) (string, error) { return r.RemoteAddr, nil })
	boomKey := keyfunc.Func(func(r *http.Request) (string, error) {
		if r.Header.Get("X-Boom") == "key" {
			panic("key function bug")
		}
		return r.RemoteAddr, nil
	})
	cost := policy.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return n
	})
	boomCost := policy.WithCost(func(r *http.Request) int64 {
		if r.Header.Get("X-Boom") == "cost" {
			panic("cost function bug")
		}
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return n
	})
	spec := func(limit int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}
	}
	small := policy.Must(policy.New("small", spec(5), addr, cost))
	costly := policy.Must(policy.New("costly", spec(3), addr, boomCost))
	keyed := policy.Must(policy.New("keyed", spec(3), boomKey, cost))
	skipper := policy.Must(policy.New("skipper", spec(3), boomKey, cost, policy.OnKeyError(policy.SkipPolicy)))
	tiny := policy.Must(policy.New("tiny", spec(2), addr, cost))
	s, err := policy.NewSet([]*policy.Policy{small, costly, keyed, skipper, tiny})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		boom  string
		named []*policy.Policy
	}{
		{"cost", []*policy.Policy{small, keyed, skipper, tiny}},
		{"key", []*policy.Policy{small, costly, tiny}},
	} {
		r := httptest.NewRequest("POST", "/upload", nil)
		r.Header.Set("X-Cost", "9")
		r.Header.Set("X-Boom", tc.boom)
		var res policy.Result
		var err error
		panicked := true
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("%s panics: Prepare of a request refused for its cost panicked: %v", tc.boom, v)
				}
			}()
			err = s.Prepare(r, s.Match(r), &res)
			panicked = false
		}()
		if panicked {
			continue
		}
		var ce *policy.CostError
		if !errors.As(err, &ce) {
			t.Errorf("%s panics: Prepare = %v, want a *CostError", tc.boom, err)
			continue
		}
		var named []*policy.Policy
		for p := range ce.All() {
			named = append(named, p)
		}
		if !slices.Equal(named, tc.named) {
			t.Errorf("%s panics: CostError names %v, want %v", tc.boom, names(named), names(tc.named))
		}
		if res.Len() != 0 || res.Mask() != 0 {
			t.Errorf("%s panics: Result holds %d policies (mask %b), want none", tc.boom, res.Len(), res.Mask())
		}
	}

	// Before any cost is out of range, the panics are the caller's.
	for _, boom := range []string{"cost", "key"} {
		r := httptest.NewRequest("POST", "/upload", nil)
		r.Header.Set("X-Cost", "1")
		r.Header.Set("X-Boom", boom)
		var res policy.Result
		func() {
			defer func() {
				if v := recover(); v == nil {
					t.Errorf("%s panics on a request in range: Prepare did not panic", boom)
				}
			}()
			_ = s.Prepare(r, s.Match(r), &res)
		}()
	}
}
