package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// refusedWithin returns the Retry-After of a request that wrap's
// middlewares admit and one inside them refuses, a middleware over store
// with inner's policies and one of one request a second, spent first (by
// a request to a middleware of it alone). Its own wait is 1 s; the rest
// is that of the middlewares further out.
func refusedWithin(t *testing.T, store algorithms.Store, inner []*policy.Policy, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	serve(middleware.MustNew(store, []*policy.Policy{fixed("second", 1, time.Second, remote)}).Handler(ok), "GET", "/")
	m := middleware.MustNew(store, append(inner, fixed("second", 1, time.Second, remote)))
	w := serve(wrap(m.Handler(ok)), "GET", "/")
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("refused within: %d, want 429", w.Code)
	}
	return w.Header().Get("Retry-After")
}

// TestRetryWaitsForOuterUnitsInFull: the 429 of a middleware further in
// waits until the policies further out that admitted the request with
// fewer units left than its cost have its cost again.
func TestRetryWaitsForOuterUnitsInFull(t *testing.T) {
	store, clock := newStore(t)
	withOuter := func(p *policy.Policy, s algorithms.Store) func(http.Handler) http.Handler {
		return middleware.MustNew(s, []*policy.Policy{p}, middleware.WithClock(clock)).Handler
	}
	three := policy.WithCost(func(*http.Request) int64 { return 3 })
	two := policy.WithCost(func(*http.Request) int64 { return 2 })
	tokens := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 10 * time.Second, Burst: 4}
	for _, tt := range []struct {
		name  string
		at    time.Duration // after t0
		outer func(http.Handler) http.Handler
		want  string
	}{
		// Cost 3 of 4 tokens, 1 a 10 s: 1 left, 2 more in 20 s (not 4
		// more, capped at the 30 s to full).
		{"tokens", 0, withOuter(policy.Must(policy.New("tokens", tokens, remote, three)), store), "20"},
		// A third-party store's decision: the next unit in 5 s, all back
		// in 6 s; the second unit (2 s at 1 per 2 s) would come later
		// than all: 6 s, not 7.
		{"capped at full", 0, withOuter(policy.Must(policy.New("capped", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 2 * time.Second, Burst: 2}, remote, two)),
			fixedAnswer{Allowed: true, Limit: 2, Remaining: 0, NextAfter: 5 * time.Second, ResetAfter: 6 * time.Second}), "6"},
		// A fixed window's units all come back at its end (the next unit's
		// 5 s here), whatever a third-party store says of the rest.
		{"fixed window", 0, withOuter(fixed("window", 2, 10*time.Second, remote, two),
			fixedAnswer{Allowed: true, Limit: 2, Remaining: 0, NextAfter: 5 * time.Second, ResetAfter: 10 * time.Second}), "5"},
		// The next unit in 666 666 667 ns, the second a third of a second
		// later, rounded up to 333 333 334 ns: 1 s and 1 ns, so 2 s.
		{"a rate's wait rounded up", 0, withOuter(policy.Must(policy.New("thirds", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Second}, remote, two)),
			fixedAnswer{Allowed: true, Limit: 3, Remaining: 0, NextAfter: 666_666_667, ResetAfter: 5 * time.Second}), "2"},
		// The minute's last unit, 59 s and 1 ns before its end: 60 s.
		{"rounded up from 1 ns", time.Second - 1, withOuter(fixed("minute", 1, time.Minute, remote), store), "60"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock.Set(t0.Add(tt.at))
			if got := refusedWithin(t, store, nil, tt.outer); got != tt.want {
				t.Errorf("Retry-After %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRetryWaitsForAdoptedShadowPolicies: a middleware in shadow mode
// refuses nothing, but a middleware further in that left out policies
// only the shadow one counted decides them on the retry: its refusal, and
// that of one further in still, waits for them (two of them here, the
// shadow one's last unit of two-min spent: 120 s) and for them alone (the
// shadow one's ten-min, also spent, 560 s from its end, is nobody's to enforce).
func TestRetryWaitsForAdoptedShadowPolicies(t *testing.T) {
	for _, tt := range []struct {
		name   string
		middle bool // a middleware between adopts them; else the refusing one does
	}{
		{"adopted by the refusing middleware", false},
		{"adopted by one in between", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			ten := fixed("ten", 10, time.Minute, remote)
			twoMin := fixed("two-min", 1, 2*time.Minute, remote)
			tenMin := fixed("ten-min", 1, 10*time.Minute, remote)
			shadow := middleware.MustNew(store, []*policy.Policy{ten, twoMin, tenMin}, middleware.WithShadow(nil), middleware.WithClock(clock))
			var inner []*policy.Policy
			wrap := shadow.Handler
			if tt.middle {
				wrap = func(h http.Handler) http.Handler {
					return shadow.Handler(middleware.MustNew(store, []*policy.Policy{ten, twoMin}, middleware.WithClock(clock)).Handler(h))
				}
			} else {
				inner = []*policy.Policy{ten, twoMin}
			}
			if got := refusedWithin(t, store, inner, wrap); got != "120" {
				t.Errorf("Retry-After %s, want 120", got)
			}
		})
	}
}

// answering is a third-party store that answers each check as answer
// says.
type answering func(algorithms.Check) algorithms.Decision

func (s answering) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds := make([]algorithms.Decision, len(checks))
	for i, c := range checks {
		ds[i] = s(c)
	}
	return ds, nil
}

// TestRetryIgnoresDeniedShadowDecisions: a shadow middleware that denied
// the request counted nothing, and its decisions do not hold back a retry
// refused further in, even of a policy that the middleware further in
// enforces on the retry (left out because another shadow middleware, over
// another store, counted it): the denied one's store said two-min's last
// unit was spent, 120 s from coming back; the retry is not refused for it.
func TestRetryIgnoresDeniedShadowDecisions(t *testing.T) {
	storeB, _ := newStore(t)
	twoMin := fixed("two-min", 2, 2*time.Minute, remote)
	spent := fixed("spent", 1, time.Hour, remote)
	storeA := answering(func(c algorithms.Check) algorithms.Decision {
		if c.Spec == twoMin.Spec() {
			return algorithms.Decision{Allowed: true, Limit: 2, Remaining: 0, NextAfter: 2 * time.Minute, ResetAfter: 2 * time.Minute}
		}
		return algorithms.Decision{Limit: 1, RetryAfter: time.Hour, NextAfter: time.Hour, ResetAfter: time.Hour}
	})
	deniedShadow := middleware.MustNew(storeA, []*policy.Policy{twoMin, spent}, middleware.WithShadow(nil))
	countingShadow := middleware.MustNew(storeB, []*policy.Policy{twoMin}, middleware.WithShadow(nil))
	got := refusedWithin(t, storeB, []*policy.Policy{twoMin}, func(h http.Handler) http.Handler {
		return deniedShadow.Handler(countingShadow.Handler(h))
	})
	if got != "1" {
		t.Errorf("Retry-After %s, want 1 (the refusing policy's own)", got)
	}
}
