package middleware_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResetRoundsUpFromOneNanosecond: a reset one nanosecond past a whole
// second is written as the next second in every profile (IETF t counts
// to NextAfter, the others' reset to ResetAfter) (an allowed
// response held for no time counts nothing off it); a whole second stays
// as it is.
func TestResetRoundsUpFromOneNanosecond(t *testing.T) {
	for _, tc := range []struct {
		reset time.Duration
		want  string
	}{{time.Second + 1, "2"}, {2 * time.Second, "2"}} {
		d := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 3, ResetAfter: tc.reset, NextAfter: tc.reset}
		for p, get := range map[middleware.Profile]func(http.Header) string{
			middleware.IETF: func(h http.Header) string { return h.Get("RateLimit") },
			middleware.Draft7: func(h http.Header) string {
				return h.Get("RateLimit")
			},
			middleware.Draft6: func(h http.Header) string { return h.Get("RateLimit-Reset") },
			middleware.Legacy: func(h http.Header) string { return h.Get("X-RateLimit-Reset") },
		} {
			want := map[middleware.Profile]string{
				middleware.IETF:   `"p";r=3;t=` + tc.want,
				middleware.Draft7: "limit=10, remaining=3, reset=" + tc.want,
				middleware.Draft6: tc.want,
				middleware.Legacy: tc.want,
			}[p]
			m := middleware.MustNew(fixedAnswer(d), []*policy.Policy{fixed("p", 10, time.Minute, user)}, middleware.WithHeaders(p))
			w := serve(m.Handler(ok), "GET", "/", "X-User", "ann")
			if got := get(w.Header()); got != want {
				t.Errorf("%v, ResetAfter %v: %q, want %q", p, tc.reset, got, want)
			}
		}
	}
}

// TestHandlerAddingToFieldsKeepsValues: a downstream handler that adds a
// value to RateLimit and to RateLimit-Policy changes neither field's first
// value (the middleware's), in the profiles that keep both fields' values
// side by side.
func TestHandlerAddingToFieldsKeepsValues(t *testing.T) {
	for _, p := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
		for _, first := range []string{"RateLimit", "RateLimit-Policy"} {
			second := map[string]string{"RateLimit": "RateLimit-Policy", "RateLimit-Policy": "RateLimit"}[first]
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, user)}, middleware.WithHeaders(p))
			before := map[string]string{}
			h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, k := range []string{first, second} {
					before[k] = w.Header().Get(k)
				}
				w.Header().Add(first, "added")
				w.Header().Add(second, "added")
			}))
			w := serve(h, "GET", "/", "X-User", "ann")
			for _, k := range []string{first, second} {
				got := w.Header().Values(k)
				if before[k] == "" || !slices.Equal(got, []string{before[k], "added"}) {
					t.Errorf("%v, adding to %s first: %s %q, want [%q \"added\"]", p, first, k, got, before[k])
				}
			}
		}
	}
}
