package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedSameNameUnguardedCopyApart: a token_bucket "p" of 5 a minute
// given to two nested middlewares, one of which holds it lower by
// SetLimitUnguarded (an adaptive.Fleet's share), counts apart: the
// unguarded copy counts under its own Spec alone, never in the 5's state,
// which the other middleware counts, so each middleware writes its own
// member (q=5 and q=3), of which the response keeps the more constraining
// one: the IETF headers carry one "p" member in each field. The inner one
// tells ErrSameNameNested once, as for two policies of one name, lowered
// further in, further out, or in both at different shares. A copy by
// SetLimit (guarded by the 5, whose decision further out its member
// holds), SetLimitUnguarded of a window kind (which is SetLimit), and the
// same share in both (one Spec, counted once) are not reported. Through
// chi and a ServeMux.
func TestNestedSameNameUnguardedCopyApart(t *testing.T) {
	type shape struct {
		name         string
		kind         algorithms.Kind
		outer, inner func(*middleware.Middleware) error
		apart        bool
	}
	unguarded := func(n int64) func(*middleware.Middleware) error {
		return func(m *middleware.Middleware) error { return m.SetLimitUnguarded("p", n) }
	}
	guarded := func(n int64) func(*middleware.Middleware) error {
		return func(m *middleware.Middleware) error { return m.SetLimit("p", n) }
	}
	shapes := []shape{
		{"bucket unguarded in", algorithms.TokenBucket, nil, unguarded(3), true},
		{"bucket unguarded out", algorithms.TokenBucket, unguarded(3), nil, true},
		{"bucket unguarded both apart", algorithms.TokenBucket, unguarded(4), unguarded(3), true},
		{"bucket guarded in", algorithms.TokenBucket, nil, guarded(3), false},
		{"bucket unguarded both same", algorithms.TokenBucket, unguarded(3), unguarded(3), false},
		{"window unguarded in", algorithms.FixedWindow, nil, unguarded(3), false},
	}
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, sh := range shapes {
			t.Run(mux+"/"+sh.name, func(t *testing.T) {
				store, clock := newStore(t)
				onErr, reports := sameNameReports()
				p := policy.Must(policy.New("p", algorithms.Spec{Algorithm: sh.kind, Limit: 5, Window: time.Minute}, constKey))
				outer := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), onErr)
				inner := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), onErr)
				for _, s := range []struct {
					m   *middleware.Middleware
					set func(*middleware.Middleware) error
				}{{outer, sh.outer}, {inner, sh.inner}} {
					if s.set == nil {
						continue
					}
					if err := s.set(s.m); err != nil {
						t.Fatal(err)
					}
				}
				h := nestedRouter(mux, outer, inner)
				for range 2 {
					w := serve(h, "GET", "/")
					if w.Code != http.StatusOK {
						t.Fatalf("status %d", w.Code)
					}
					members := len(w.Header().Values("RateLimit-Policy"))
					if line := strings.Join(w.Header().Values("RateLimit-Policy"), ", "); line != "" {
						members = strings.Count(line, `"p"`)
					}
					if want := 1; members != want {
						t.Fatalf("RateLimit-Policy %q: %d \"p\" members, want %d", w.Header().Values("RateLimit-Policy"), members, want)
					}
				}
				want := 0
				if sh.apart {
					want = 1
				}
				got := reports()
				if len(got) != want {
					t.Fatalf("%d ErrSameNameNested reports %v, want %d", len(got), got, want)
				}
				if want == 1 && !strings.Contains(got[0].Error(), `"p"`) {
					t.Errorf("report %q does not name the policy", got[0])
				}
			})
		}
	}
}
