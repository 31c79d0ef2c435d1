package metricset_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// TestCountShadowedAbandoned: shadow mode serves a request whose context
// ended during the store call (outcome ShadowDenied, Result not taken,
// Err the store's error) where the enforcing middleware reports it
// Abandoned; it counts nothing, not a store error (nor abandoned: it was
// served), where Abandoned counts abandoned alone. A store failure shadowed
// while the request's context is live still counts one, and so does an
// abandoned request the fallback store decided (the store failed before
// the request was abandoned), as abandoned too.
func TestCountShadowedAbandoned(t *testing.T) {
	tight, loose := fixed("tight", 1), fixed("loose", 10)
	r, result := newResults(t, tight, loose)
	ctx, cancel := context.WithCancel(r.Context())
	cancel()
	gone := r.WithContext(ctx)
	fallback := result(nil)
	setFailure(fallback, true, nil)
	for _, tc := range []struct {
		name string
		e    middleware.Event
		want string
	}{
		{"abandoned", middleware.Event{Request: gone, Result: result(context.Canceled), Outcome: middleware.Abandoned}, "loose/abandoned 1, tight/abandoned 1"},
		{"abandoned, shadowed", middleware.Event{Request: gone, Result: result(context.Canceled), Outcome: middleware.ShadowDenied}, ""},
		{"fallback decided, then abandoned", middleware.Event{Request: gone, Result: fallback, Outcome: middleware.Abandoned}, "loose/abandoned 1, loose/store 1, tight/abandoned 1, tight/store 1"},
		{"store failed, shadowed", middleware.Event{Request: r, Result: result(errors.New("redis: down")), Outcome: middleware.ShadowDenied}, "loose/store 1, tight/store 1"},
	} {
		ps := newTallies()
		ps.Count(tc.e, func(c *tally, s metricset.Series) { c.n[s]++ })
		if got := counted(ps, "tight", "loose"); got != tc.want {
			t.Errorf("%s: counted %q, want %q", tc.name, got, tc.want)
		}
	}
}
