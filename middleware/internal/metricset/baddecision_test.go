package metricset_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// TestCountTakenStoreFailure: a store call whose decisions came back but
// that the middleware refuses as a failure of the store (a Delay the
// policy cannot give: Result taken, Err set) is a store error under each
// evaluated policy when the request fails open, closed, or closed in
// shadow mode; its decisions are not counted as outcomes, since they
// decided nothing (the first Result made is allowed by both policies, the
// later ones denied by tight: neither counts).
func TestCountTakenStoreFailure(t *testing.T) {
	tight, loose := fixed("tight", 1), fixed("loose", 10)
	_, result := newResults(t, tight, loose)
	bad := errors.New("middleware: store returned a Delay its policy cannot give")
	for _, o := range []middleware.Outcome{middleware.FailedOpen, middleware.FailedClosed, middleware.ShadowDenied} {
		res := result(nil)
		setFailure(res, false, bad)
		ps := newTallies()
		ps.Count(middleware.Event{Result: res, Outcome: o}, func(c *tally, s metricset.Series) { c.n[s]++ })
		if got, want := counted(ps, "tight", "loose"), "loose/store 1, tight/store 1"; got != want {
			t.Errorf("%v: counted %q, want %q", o, got, want)
		}
	}
}
