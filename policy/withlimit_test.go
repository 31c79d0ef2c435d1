package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

func TestWithLimit(t *testing.T) {
	key := keyfunc.Func(func(*http.Request) (string, error) { return "k", nil })
	p := policy.Must(policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 25}, key, policy.WithMethods("POST")))
	q, err := p.WithLimit(4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.Spec(), (algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Second, Burst: 10}); got != want {
		t.Errorf("WithLimit(4).Spec() = %+v, want %+v", got, want)
	}
	if got, want := q.String(), `"tb";q=10;w=1`; got != want {
		t.Errorf("WithLimit(4).String() = %s, want %s", got, want)
	}
	if p.Spec().Limit != 10 || p.String() != `"tb";q=25;w=1` {
		t.Errorf("WithLimit changed p: %+v %s", p.Spec(), p)
	}
	if q.Applies(httptest.NewRequest("GET", "/", nil), "") {
		t.Error("the copy lost its methods")
	}
	if same, _ := p.WithLimit(10); same != p {
		t.Error("WithLimit(Spec.Limit) did not return p")
	}
	if q, _ := p.WithLimit(1); q.Spec().Burst != 2 {
		t.Errorf("WithLimit(1).Burst = %d, want 2 (25/10 rounded down)", q.Spec().Burst)
	}
	for _, bad := range []int64{0, -3, algorithms.MaxLimit + 1} {
		if _, err := p.WithLimit(bad); err == nil {
			t.Errorf("WithLimit(%d) = nil error", bad)
		}
	}
}
