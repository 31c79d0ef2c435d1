package middleware_test

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAllocationsLowered: a policy lowered by SetLimit is checked under
// its guard too (policy.Policy.Guard), whose store call a request's Result
// keeps in one allocation more (up to eight checks: four policies and
// their guards); without context, the pooled Results keep theirs, so the
// budget is the unlowered one's.
func TestAllocationsLowered(t *testing.T) {
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	for _, n := range []int{1, 4} {
		for _, ctx := range []bool{true, false} {
			var ps []*policy.Policy
			for i := range n {
				ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, ip)))
			}
			var opts []middleware.Option
			want := bare + 2
			if !ctx {
				opts, want = append(opts, middleware.WithoutContext()), bare+1
			}
			m := middleware.MustNew(store, ps, opts...)
			for i := range n {
				if err := m.SetLimit("p"+strconv.Itoa(i), 500_000); err != nil {
					t.Fatal(err)
				}
			}
			h := m.Handler(ok)
			h.ServeHTTP(httptest.NewRecorder(), r) // the store's first sight of the keys allocates
			if got := allocsPerRequest(h); got > want {
				t.Errorf("%d lowered policies, context %v: %v allocations per request, want at most %v", n, ctx, got, want)
			}
		}
	}
}
