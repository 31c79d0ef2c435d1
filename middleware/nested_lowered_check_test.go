package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// checkLog is a store that records the checks of each Take: the Spec's
// limit and the limit it is judged at (0: its own).
type checkLog struct {
	algorithms.Store
	mu    sync.Mutex
	takes [][]string
}

func (s *checkLog) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	var take []string
	for _, c := range checks {
		take = append(take, fmt.Sprintf("%d/%d", c.Spec.Limit, c.Limit))
	}
	s.mu.Lock()
	s.takes = append(s.takes, take)
	s.mu.Unlock()
	return s.Store.Take(ctx, checks...)
}

// TestNestedLoweredCopySecondCheck pins the cost ErrCountedTwice's doc
// states of a window kind's copy lowered by SetLimit (100 a minute to 50)
// in a middleware nested in one that runs the policy as configured: alone,
// the copy is checked on its guard's state (the 100's) judged at 50, one
// check; nested, the middleware further out counts the request in that
// state, and the one further in, which leaves that guard out, checks the
// request again under its own lowered Spec (a check "50/0", a state of
// its own, a key per client while the limit is lowered), though its
// decision could be the one further out's judged at 50, which it merges
// in. The check comes from package policy: a policy decided by a store
// call is checked under one Spec at least (policy.Result's dropGuard puts
// a folded copy's own check back). Should that change, this fails, and
// the doc is to change with it. The response reports r=49 either way.
// Through chi and a ServeMux, for a fixed and a sliding window.
func TestNestedLoweredCopySecondCheck(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, kind := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow} {
		for _, mux := range []string{"alone", "chi", "ServeMux"} {
			t.Run(string(kind)+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				log := &checkLog{Store: store}
				spec := algorithms.Spec{Algorithm: kind, Limit: 100, Window: time.Minute}
				p := policy.Must(policy.New("p", spec, constKey))
				inner := middleware.MustNew(log, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
				if err := inner.SetLimit("p", 50); err != nil {
					t.Fatal(err)
				}
				h := inner.Handler(ok)
				want := [][]string{{"100/50"}}
				if mux != "alone" {
					outer := middleware.MustNew(log, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
					h = nestedRouter(mux, outer, inner)
					want = [][]string{{"100/0"}, {"50/0"}}
				}
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"p";r=49;t=`+tOf(kind) {
					t.Fatalf("%d, RateLimit %q", w.Code, w.Header().Values("RateLimit"))
				}
				if !slices.EqualFunc(log.takes, want, slices.Equal) {
					t.Errorf("store calls %q (spec limit/judged at), want %q", log.takes, want)
				}
			})
		}
	}
}

// tOf is the t of a first request's member of a one-minute policy of kind.
func tOf(kind algorithms.Kind) string {
	if kind == algorithms.SlidingWindow {
		return "120"
	}
	return "60"
}
