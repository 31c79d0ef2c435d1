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
// second is written as the next second in every profile (IETF's t counts
// to NextAfter, the others' reset to ResetAfter); a whole second stays as
// it is. The response is not held, so nothing is counted off.
func TestResetRoundsUpFromOneNanosecond(t *testing.T) {
	for _, reset := range []time.Duration{time.Second + 1, 2 * time.Second} {
		d := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 3, ResetAfter: reset, NextAfter: reset}
		for _, tc := range []struct {
			p            middleware.Profile
			field, value string
		}{
			{middleware.IETF, "RateLimit", `"p";r=3;t=2`},
			{middleware.Draft7, "RateLimit", "limit=10, remaining=3, reset=2"},
			{middleware.Draft6, "RateLimit-Reset", "2"},
			{middleware.Legacy, "X-RateLimit-Reset", "2"},
		} {
			m := middleware.MustNew(fixedAnswer(d), []*policy.Policy{fixed("p", 10, time.Minute, user)}, middleware.WithHeaders(tc.p))
			w := serve(m.Handler(ok), "GET", "/", "X-User", "ann")
			if got := w.Header().Get(tc.field); got != tc.value {
				t.Errorf("%v, reset %v: %s %q, want %q", tc.p, reset, tc.field, got, tc.value)
			}
		}
	}
}

// TestHandlerAddingToFieldsKeepsValues: a downstream handler that adds a
// value to each rate-limit field, in either order, changes no field's
// first value (the middleware's): the fields' value slices never share a
// backing array a handler's Add could write into.
func TestHandlerAddingToFieldsKeepsValues(t *testing.T) {
	fields := map[middleware.Profile][]string{
		middleware.IETF:       {"RateLimit-Policy", "RateLimit"},
		middleware.Draft7:     {"RateLimit", "RateLimit-Policy"},
		middleware.Draft6:     {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"},
		middleware.Legacy:     {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
		middleware.LegacyUnix: {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
	}
	for p, keys := range fields {
		for _, order := range [][]string{keys, reversed(keys)} {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, user)}, middleware.WithHeaders(p))
			before := map[string]string{}
			h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, k := range order {
					before[k] = w.Header().Get(k)
				}
				for _, k := range order {
					w.Header().Add(k, "added")
				}
			}))
			w := serve(h, "GET", "/", "X-User", "ann")
			for _, k := range order {
				got := w.Header().Values(k)
				if before[k] == "" || !slices.Equal(got, []string{before[k], "added"}) {
					t.Errorf("%v, adding in order %q: %s %q, want [%q \"added\"]", p, order, k, got, before[k])
				}
			}
		}
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// TestRevisedResetRoundsUpFromOneNanosecond: after a give-back (a success
// under CountIf(CountFailed), whose handler sends no headers itself) the
// RateLimit member is rewritten with the store's decision after it, t
// counted from that decision as it stands: a reset one nanosecond past a
// whole second is written as the next second. The store's clock is 2 s +
// 1 ns before the end of a 10 s window, where one failure is still counted.
func TestRevisedResetRoundsUpFromOneNanosecond(t *testing.T) {
	now := time.Unix(1_000_000_008, 0).Add(-time.Nanosecond) // 8 s − 1 ns into a 10 s window
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{fixed("login", 5, 10*time.Second, user, policy.CountIf(policy.CountFailed))})
	status := http.StatusForbidden
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
	}))
	if w := serve(h, "POST", "/login", "X-User", "ann"); w.Code != http.StatusForbidden || w.Header().Get("RateLimit") != `"login";r=4;t=3` {
		t.Fatalf("failure: %d, RateLimit %q; want 403, %q", w.Code, w.Header().Get("RateLimit"), `"login";r=4;t=3`)
	}
	status = http.StatusOK
	if w := serve(h, "POST", "/login", "X-User", "ann"); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"login";r=4;t=3` {
		t.Fatalf("success given back: %d, RateLimit %q; want 200, %q", w.Code, w.Header().Get("RateLimit"), `"login";r=4;t=3`)
	}
}
