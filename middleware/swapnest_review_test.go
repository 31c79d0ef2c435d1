package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedInItselfAcrossSwap: a middleware nested in itself (chi's
// r.Use and r.With of the same one; a ServeMux handler wrapped by the
// middleware that wraps the mux) counts each request once: the inner one
// leaves out the policies the outer one decided (see ErrCountedTwice).
// When the rule set was swapped between the two (a reload while the
// outer one held the request for its leaky_queue Delay), the inner one
// took the new set, whose policies, rebuilt by the reload, were other
// *policy.Policy values: it counted the request again under the
// unchanged policies, the same store state, and held it again for a
// second place in the queue, and the response listed each policy twice.
// A request is decided under the set it started with, in both layers; so
// too across a SetLimit, which gives the policy it limits a new Spec.
func TestNestedInItselfAcrossSwap(t *testing.T) {
	build := func() []*policy.Policy {
		return []*policy.Policy{queue10("q", time.Minute), fixed("per-ip", 10, time.Minute, remote)}
	}
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, swap := range []string{"", "SetPolicies", "SetLimit"} {
			name := mux + "/no swap"
			if swap != "" {
				name = mux + "/" + swap + " during the outer hold"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				var m *middleware.Middleware
				var waits []time.Duration
				var errs []error
				m = middleware.MustNew(store, build(), middleware.WithClock(clock),
					middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }),
					middleware.WithWait(func(_ context.Context, d time.Duration) error {
						waits = append(waits, d)
						var err error
						switch swap {
						case "SetPolicies":
							err = m.SetPolicies(build())
						case "SetLimit":
							// As an adaptive controller does: a new
							// effective Spec for per-ip.
							err = m.SetLimit("per-ip", 5)
						}
						if err != nil {
							t.Fatal(err)
						}
						clock.Advance(d)
						return nil
					}))
				h := nestedRouter(mux, m, m)
				serve(h, "GET", "/")
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK {
					t.Fatalf("second request: %d, want 200", w.Code)
				}
				if !slices.Equal(waits, []time.Duration{10 * time.Second}) {
					t.Errorf("holds %v, want one of 10 s: the request takes one place in the queue", waits)
				}
				if got, want := strings.Join(w.Header().Values("RateLimit"), " | "), `"q";r=5;t=0, "per-ip";r=8;t=50`; got != want {
					t.Errorf("RateLimit %q, want %q: each policy once, the request counted once", got, want)
				}
				if len(errs) != 1 || !errors.Is(errs[0], middleware.ErrCountedTwice) {
					t.Errorf("errors %v, want ErrCountedTwice once", errs)
				}
				if swap == "SetLimit" {
					return // Peek reads the new effective Spec's state
				}
				// The store agrees: 8 of per-ip left before a third request.
				clock.Advance(20 * time.Second)
				res, err := m.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Decision(1).Remaining; got != 8 {
					t.Errorf("per-ip: %d left after two requests, want 8", got)
				}
			})
		}
	}
}
