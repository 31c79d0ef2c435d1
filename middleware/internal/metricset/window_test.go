package metricset_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
	"github.com/ratekeeper/ratekeeper/policy"
)

// windowSet returns a rule set of one fixed_window policy "api" of limit
// 100 and the window given.
func windowSet(t *testing.T, window time.Duration) *policy.Set {
	t.Helper()
	p, err := policy.New("api", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: window}, keyfunc.Func(func(*http.Request) (string, error) { return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestWindowNotBackToAnOlderSet: a middleware installs a new rule set at
// every reload, and never an older one again; a request decided under
// the older set can be observed after the first under the newer one (a
// leaky_queue hold ends after the reload; a slow store call). Its
// windows are no longer those of the middleware: observed late, they
// must not replace the newer set's, which would hold until the next
// request, for ever if none comes.
func TestWindowNotBackToAnOlderSet(t *testing.T) {
	ps := newTallies()
	var o metricset.Owner
	var window time.Duration
	report := func(l metricset.Limits[*tally], ok bool) { window = l.Window }
	minute, hour := windowSet(t, time.Minute), windowSet(t, time.Hour)

	ps.ObserveSet(&o, minute, report)
	ps.SetLimits(&o, "api", 100, 100, report)
	if window != time.Minute {
		t.Fatalf("window %v, want 1m", window)
	}
	ps.ObserveSet(&o, hour, report) // the reload's set
	if window != time.Hour {
		t.Fatalf("after the reload: window %v, want 1h", window)
	}
	ps.ObserveSet(&o, minute, report) // a request decided before the reload, observed late
	if got := ps.AppendLimits(nil)[0].Window; got != time.Hour {
		t.Errorf("after a request of the older set: window %v, want 1h", got)
	}
}

// TestWindowSharedOwner: an Owner told of several middlewares (an
// adapter called by the application's own observer, for each) keeps
// the window of a name only one of their sets has while requests of the
// other come: it cannot tell their sets from older ones.
func TestWindowSharedOwner(t *testing.T) {
	ps := newTallies()
	o := metricset.Owner{Shared: true}
	minute := windowSet(t, time.Minute)
	p, err := policy.New("other", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}, keyfunc.Func(func(*http.Request) (string, error) { return "k", nil }))
	if err != nil {
		t.Fatal(err)
	}
	other, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	ps.SetLimits(&o, "api", 100, 100, nil)
	ps.SetLimits(&o, "other", 5, 5, nil)
	for range 2 {
		ps.ObserveSet(&o, minute, nil)
		ps.ObserveSet(&o, other, nil)
	}
	var got []string
	for _, l := range ps.AppendLimits(nil) {
		got = append(got, l.Name+" "+l.Window.String())
	}
	if want := []string{"api 1m0s", "other 1s"}; !slices.Equal(got, want) {
		t.Errorf("windows %q, want %q", got, want)
	}
}
