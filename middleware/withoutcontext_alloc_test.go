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

// TestAllocationsWithoutContextHeaderValues: WithoutContext drops the
// allocation that carries the decision downstream (the request copy and
// the Result, 704 bytes with one policy to 1,280 with four), but with
// rate-limit headers on (the default) the middleware then allocates their
// values (80 bytes, 208 when long): the count per request stays the
// handler's plus one, in fewer bytes. Only without headers does
// WithoutContext leave the handler's allocations alone. The README once
// said WithoutContext "saves the one allocation per request".
func TestAllocationsWithoutContextHeaderValues(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items)")
	}
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	for _, n := range []int{1, 4} {
		var ps []*policy.Policy
		for i := range n {
			ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, ip)))
		}
		for _, c := range []struct {
			name string
			opts []middleware.Option
			want float64
		}{
			{"context", nil, bare + 1},
			{"WithoutContext", []middleware.Option{middleware.WithoutContext()}, bare + 1},
			{"WithoutContext, no headers", []middleware.Option{middleware.WithoutContext(), middleware.WithHeaders(middleware.NoHeaders)}, bare},
		} {
			h := middleware.MustNew(store, ps, c.opts...).Handler(ok)
			h.ServeHTTP(httptest.NewRecorder(), r) // the store's first sight of the key allocates
			if got := allocsPerRequest(h); got != c.want {
				t.Errorf("%d policies, %s: %v allocations per request, want %v (bare handler %v)", n, c.name, got, c.want, bare)
			}
		}
	}
}
