package middleware_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestEventCountedFurtherOut: one policy ("shared") given to two nested
// middlewares, the inner one's copy lowered by SetLimit: the inner one
// decides it (judging the state the outer one counted at its lowered
// limit), and its Event says, for that policy alone, that a middleware
// further out counted the request under it, by the index of the policy
// in its Result (a route policy that does not apply comes first in its
// Set, so that the index is not the bit of the Set). The outer one's
// Event, and the inner one's for its own policy, say no. Not lowered,
// the policy is left out of the inner one's Result. A leaky_queue copy
// lowered so holds the request in a queue of its own: no. Through chi
// and a ServeMux.
func TestEventCountedFurtherOut(t *testing.T) {
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute}
	window := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute}
	for _, tc := range []struct {
		name  string
		spec  algorithms.Spec
		lower bool
		want  string
	}{
		{"lowered", window, true, "outer: shared=false | inner: own=false shared=true"},
		{"not lowered", window, false, "outer: shared=false | inner: own=false"},
		{"leaky_queue lowered", queue, true, "outer: shared=false | inner: own=false shared=false"},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				var seen []string
				record := func(who string) middleware.Option {
					return middleware.WithObserver(observerFunc(func(e middleware.Event) {
						s := who + ":"
						for i := range e.Result.Len() {
							s += " " + e.Result.Policy(i).Name() + "=" + strconv.FormatBool(e.CountedFurtherOut(i))
						}
						seen = append(seen, s)
					}))
				}
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				shared := policy.Must(policy.New("shared", tc.spec, remote))
				route := fixed("route", 10, time.Minute, remote, policy.WithRoutes("POST /elsewhere"))
				outer := middleware.MustNew(store, []*policy.Policy{shared}, record("outer"), quiet, advancing(clock))
				inner := middleware.MustNew(store, []*policy.Policy{route, fixed("own", 10, time.Minute, remote), shared},
					record("inner"), quiet, advancing(clock))
				if tc.lower {
					setLimit(t, inner, "shared", 2)
				}
				if w := serve(nestedRouter(mux, outer, inner), "GET", "/"); w.Code != http.StatusOK {
					t.Fatalf("status %d", w.Code)
				}
				if got := strings.Join(seen, " | "); got != tc.want {
					t.Errorf("events %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestEventCountedFurtherOutShadowDenied: a middleware further out in
// shadow mode that denied the request counted nothing (a denied Take
// consumes nothing): the inner one decides the copy it lowered on the
// state itself, and its Event says that no middleware further out
// counted the request under it. Shared at 2 a minute, lowered to 1
// further in: the first request is counted further out and admitted
// further in; the second is counted further out and refused further in
// (past the 1); the third is denied by the shadow one and refused
// further in. Through chi and a ServeMux.
func TestEventCountedFurtherOutShadowDenied(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			var seen []string
			quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
			shared := fixed("shared", 2, time.Minute, remote)
			outer := middleware.MustNew(store, []*policy.Policy{shared}, quiet, middleware.WithShadow(nil), middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{shared}, quiet, middleware.WithClock(clock),
				middleware.WithObserver(observerFunc(func(e middleware.Event) {
					seen = append(seen, e.Outcome.String()+" "+strconv.FormatBool(e.CountedFurtherOut(0)))
				})))
			setLimit(t, inner, "shared", 1)
			h := nestedRouter(mux, outer, inner)
			for range 3 {
				serve(h, "GET", "/")
			}
			if got, want := strings.Join(seen, ", "), "allowed true, denied true, denied false"; got != want {
				t.Errorf("inner events %q, want %q", got, want)
			}
		})
	}
}
