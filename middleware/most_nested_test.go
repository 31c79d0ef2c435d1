package middleware_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestIETFMostConstrainingNestedAsIETF: two nested middlewares built
// with IETFMostConstraining send, on every response, the lines two IETF
// ones send, each RateLimit line cut to one of its members (the same
// bytes) and RateLimit-Policy unchanged, with the same status and
// Retry-After: through an inner hold (the outer line counted after it),
// an inner denial, a policy both share (reported once), and a shadow
// outer middleware whose denial the inner one decides again: the inner
// one removes the outer member of that policy as under IETF, which under
// IETFMostConstraining was the outer line's only member; the outer line
// then reports the most constraining of its other policies, as IETF
// keeps them: the 429 carries the outer "hour";r=99;t=2760 beside the
// inner "trial";r=0;t=60, IETF's members byte for byte. (The outer line
// went with its member before, leaving the inner line alone: the outer
// middleware's "hour", which the request counted in, was not reported at
// all.) Through chi (r.Use, r.With) and a ServeMux. A case's requests
// come at the given advances of the clock.
func TestIETFMostConstrainingNestedAsIETF(t *testing.T) {
	shared := fixed("shared", 4, time.Minute, remote)
	trial := fixed("trial", 1, time.Minute, remote)
	for _, c := range []struct {
		name                   string
		outer, inner           func() []*policy.Policy
		outerOpts              []middleware.Option
		advances               []time.Duration
		wantStatus, wantCounts []int    // per request: status and RateLimit lines
		wantLast               []string // the last request's RateLimit lines, if given
	}{
		{name: "inner holds",
			outer: func() []*policy.Policy {
				return []*policy.Policy{fixed("minute", 3, time.Minute, remote), fixed("day", 100, 24*time.Hour, remote)}
			},
			inner: func() []*policy.Policy {
				return []*policy.Policy{queueEvery("queue", 10*time.Second), fixed("hour", 50, time.Hour, remote)}
			},
			advances: []time.Duration{0, 0, 0, 0, time.Second}, wantStatus: []int{200, 200, 200, 429, 429}, wantCounts: []int{2, 2, 2, 1, 1}},
		{name: "inner denies",
			outer: func() []*policy.Policy { return []*policy.Policy{fixed("hour", 100, time.Hour, remote)} },
			inner: func() []*policy.Policy {
				return []*policy.Policy{fixed("second", 1, time.Second, remote), fixed("minute", 10, time.Minute, remote)}
			},
			advances: []time.Duration{0, 0, time.Second, 0}, wantStatus: []int{200, 429, 200, 429}, wantCounts: []int{2, 2, 2, 2}},
		{name: "shared policy",
			outer:    func() []*policy.Policy { return []*policy.Policy{shared, fixed("hour", 100, time.Hour, remote)} },
			inner:    func() []*policy.Policy { return []*policy.Policy{shared, fixed("second", 2, time.Second, remote)} },
			advances: []time.Duration{0, 0, 0, time.Second, 0, 0}, wantStatus: []int{200, 200, 429, 200, 429, 429}, wantCounts: []int{2, 2, 2, 2, 1, 1}},
		{name: "shadow outer",
			outer:     func() []*policy.Policy { return []*policy.Policy{trial, fixed("hour", 100, time.Hour, remote)} },
			inner:     func() []*policy.Policy { return []*policy.Policy{trial, fixed("minute", 5, time.Minute, remote)} },
			outerOpts: []middleware.Option{middleware.WithShadow(nil)},
			advances:  []time.Duration{0, 0, 0}, wantStatus: []int{200, 429, 429}, wantCounts: []int{2, 2, 2},
			wantLast: []string{`"hour";r=99;t=2760`, `"trial";r=0;t=60`}},
	} {
		for _, router := range []string{"chi", "ServeMux"} {
			t.Run(c.name+"/"+router, func(t *testing.T) {
				var got [2][]http.Header
				var codes [2][]int
				for k, p := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
					store, clock := newStore(t)
					// The setup warning of the shared policy goes to the
					// error handler, not to the log; any other error fails.
					onError := middleware.WithErrorHandler(func(_ *http.Request, err error) {
						if !errors.Is(err, middleware.ErrCountedTwice) {
							t.Errorf("error handler: %v", err)
						}
					})
					opts := []middleware.Option{middleware.WithHeaders(p), middleware.WithClock(clock), advancing(clock), onError}
					outer := middleware.MustNew(store, c.outer(), append(opts, c.outerOpts...)...)
					inner := middleware.MustNew(store, c.inner(), opts...)
					h := nestedRouter(router, outer, inner)
					for _, a := range c.advances {
						clock.Advance(a)
						w := serve(h, "GET", "/")
						got[k], codes[k] = append(got[k], w.Header()), append(codes[k], w.Code)
					}
				}
				for i := range c.advances {
					full, most := got[0][i], got[1][i]
					if codes[0][i] != c.wantStatus[i] || codes[1][i] != c.wantStatus[i] {
						t.Errorf("request %d: status %d (IETF %d), want %d", i+1, codes[1][i], codes[0][i], c.wantStatus[i])
					}
					for _, k := range []string{"RateLimit-Policy", "Retry-After"} {
						if !slices.Equal(most.Values(k), full.Values(k)) {
							t.Errorf("request %d: %s %q, IETF's %q", i+1, k, most.Values(k), full.Values(k))
						}
					}
					// Each line of ours is one member of a line of IETF's,
					// in order; a line whose member a middleware further in
					// removed (it decided the policy again) is gone.
					fl, ml := full.Values("RateLimit"), most.Values("RateLimit")
					if len(ml) != c.wantCounts[i] {
						t.Errorf("request %d: RateLimit %q (IETF %q), want %d lines", i+1, ml, fl, c.wantCounts[i])
					}
					j := 0
					for _, l := range ml {
						for j < len(fl) && !slices.Contains(strings.Split(fl[j], ", "), l) {
							j++
						}
						if strings.Contains(l, ", ") || j == len(fl) {
							t.Errorf("request %d: RateLimit %q, want each line one member of IETF's lines %q, in order", i+1, ml, fl)
							break
						}
						j++
					}
				}
				if last := got[1][len(c.advances)-1].Values("RateLimit"); c.wantLast != nil && !slices.Equal(last, c.wantLast) {
					t.Errorf("last request: RateLimit %q, want %q", last, c.wantLast)
				}
				if t.Failed() {
					for i := range c.advances {
						t.Logf("request %d: IETF %q; most %q", i+1, got[0][i].Values("RateLimit"), got[1][i].Values("RateLimit"))
					}
				}
			})
		}
	}
}
