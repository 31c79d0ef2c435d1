package metricset_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// TestCountFallbackDenied: a request the fallback store denied (the
// middleware sets Fallback, and Err to the store's error, on a taken
// Result) counts the store's failure under each evaluated policy and the
// denial under the policy that denied it, as one it admitted counts its
// admission; its error, a store's, is no failure to prepare it.
func TestCountFallbackDenied(t *testing.T) {
	_, result := newResults(t, fixed("tight", 1), fixed("loose", 10))
	result(nil) // tight's one request
	storeDown := errors.New("redis: down")
	for _, tc := range []struct {
		outcome middleware.Outcome
		want    string
	}{
		{middleware.Denied, "loose/store 1, tight/denied 1, tight/store 1"},
		{middleware.ShadowDenied, "loose/store 1, tight/shadow_denied 1, tight/store 1"},
	} {
		res := result(nil)
		setFailure(res, true, storeDown)
		ps := newTallies()
		ps.Count(middleware.Event{Result: res, Outcome: tc.outcome}, func(c *tally, s metricset.Series) { c.n[s]++ })
		if got := counted(ps, "tight", "loose"); got != tc.want {
			t.Errorf("%s by the fallback store: counted %q, want %q", tc.outcome, got, tc.want)
		}
	}
}

// TestRemoveUnused: RemoveLimits and CloseOwner on Policies that never
// built a value (an adapter forgetting a policy it has not counted yet)
// forget nothing, report nothing, and leave them usable.
func TestRemoveUnused(t *testing.T) {
	ps := newTallies()
	var o metricset.Owner
	ps.RemoveLimits(&o, "p0", func(l metricset.Limits[*tally], ok bool) { t.Errorf("RemoveLimits reported %+v, %v", l, ok) })
	ps.CloseOwner(&o, func(l metricset.Limits[*tally], ok bool) { t.Errorf("CloseOwner reported %+v, %v", l, ok) })
	if c := ps.Get("p0"); c == nil || c.name != "p0" {
		t.Errorf("Get after Remove of an unused Policies = %+v", c)
	}
	if got := ps.AppendLimits(nil); len(got) != 0 {
		t.Errorf("limits after Remove of an unused Policies: %d", len(got))
	}
}

// TestAppendLimitsNilRoom: a nil dst is given room for every policy's
// limits, and no more.
func TestAppendLimitsNilRoom(t *testing.T) {
	ps := newTallies()
	var o metricset.Owner
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		ps.SetLimits(&o, name, 1, 1, nil)
	}
	if got := ps.AppendLimits(nil); len(got) != 10 || cap(got) != 10 {
		t.Errorf("AppendLimits(nil): %d limits, room for %d; want room for the 10", len(got), cap(got))
	}
}

// TestStatesValuesExact: the gauges are 1 and 0, not merely nonzero and
// zero: healthy is 1 with no middleware failing, and a failing state 1
// with healthy 0.
func TestStatesValuesExact(t *testing.T) {
	var st metricset.States
	if got, want := st.Values(), (metricset.StateValues{middleware.StateHealthy: 1}); got != want {
		t.Errorf("zero States: %v, want %v", got, want)
	}
	st.Transition(middleware.StateHealthy, middleware.StateFallback, nil)
	st.Transition(middleware.StateHealthy, middleware.StateFallback, nil)
	if got, want := st.Values(), (metricset.StateValues{middleware.StateFallback: 1}); got != want {
		t.Errorf("two middlewares in fallback: %v, want %v", got, want)
	}
}

// TestStatesBeyond: a transition from or to a State beyond
// middleware.States (the first one past it included) counts nothing on
// that side, and the other side as ever.
func TestStatesBeyond(t *testing.T) {
	beyond := middleware.State(len(middleware.States))
	var st metricset.States
	st.Transition(middleware.StateHealthy, beyond, nil)
	st.Transition(middleware.State(200), beyond, nil)
	if got, want := st.Values(), (metricset.StateValues{middleware.StateHealthy: 1}); got != want {
		t.Errorf("after transitions to states beyond: %v, want %v", got, want)
	}
	st.Transition(beyond, middleware.StateFailingOpen, nil)
	if got, want := st.Values(), (metricset.StateValues{middleware.StateFailingOpen: 1}); got != want {
		t.Errorf("after a transition from beyond to failing open: %v, want %v", got, want)
	}
	st.Transition(middleware.StateFailingOpen, beyond, nil)
	if got, want := st.Values(), (metricset.StateValues{middleware.StateHealthy: 1}); got != want {
		t.Errorf("after failing open to beyond: %v, want %v", got, want)
	}
}
