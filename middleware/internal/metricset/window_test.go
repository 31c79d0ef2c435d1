package metricset_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// reports returns a Report noting each call in *told, as
// "name limit/configured per window" or "-name", and the reports noted
// since the last call of take, one per line.
func reports() (report metricset.Report[*tally], take func() string) {
	var told []string
	report = func(l metricset.Limits[*tally], ok bool) {
		if !ok {
			told = append(told, "-"+l.Name)
			return
		}
		told = append(told, fmt.Sprintf("%s %d/%d per %v", l.Name, l.Limit, l.Configured, l.Window))
	}
	take = func() string {
		s := strings.Join(told, "\n")
		told = nil
		return s
	}
	return report, take
}

// TestWindowReportedWithTheLimits: a window an owner reports before the
// name's limits (the middleware tells a PolicyObserver a policy's Spec
// before its limits) is reported with them, once; a window changed alone
// is reported, one unchanged is not; a name removed, or its owner closed,
// forgets the window with the limits, so that limits reported again later
// have none until one is reported.
func TestWindowReportedWithTheLimits(t *testing.T) {
	ps := newTallies()
	report, take := reports()
	var o metricset.Owner
	check := func(when, want string) {
		t.Helper()
		if got := take(); got != want {
			t.Errorf("%s: reported\n%s\nwant\n%s", when, got, want)
		}
	}

	ps.SetWindow(&o, "api", time.Minute, report)
	check("a window before the limits", "")
	ps.SetLimits(&o, "api", 100, 100, report)
	check("the limits", "api 100/100 per 1m0s")
	ps.SetWindow(&o, "api", time.Hour, report)
	check("the window changed alone", "api 100/100 per 1h0m0s")
	ps.SetWindow(&o, "api", time.Hour, report)
	check("the same window again", "")
	ps.SetLimits(&o, "api", 50, 100, report)
	check("the limit changed alone", "api 50/100 per 1h0m0s")

	ps.RemoveLimits(&o, "api", report)
	check("the name removed", "-api")
	ps.SetLimits(&o, "api", 100, 100, report)
	check("limits again, no window since", "api 100/100 per 0s")

	ps.SetWindow(&o, "api", time.Second, report)
	check("a window for the limits", "api 100/100 per 1s")
	ps.SetWindow(&o, "other", time.Second, report) // no limits yet
	ps.CloseOwner(&o, report)
	check("the owner closed", "-api")
	ps.SetLimits(&o, "other", 5, 5, report)
	check("limits after the close", "other 5/5 per 0s")
}

// TestWindowOfTheOwnerReportedLast: the limits and the window a name
// reports are those of one owner, the one that reported last (a window
// too), never one owner's limits in another's window; removing the name
// from that owner reports the other's.
func TestWindowOfTheOwnerReportedLast(t *testing.T) {
	ps := newTallies()
	report, take := reports()
	var a, b metricset.Owner
	ps.SetWindow(&a, "api", time.Minute, report)
	ps.SetLimits(&a, "api", 100, 100, report)
	ps.SetWindow(&b, "api", time.Hour, report)
	ps.SetLimits(&b, "api", 1000, 1000, report)
	if got, want := take(), "api 100/100 per 1m0s\napi 1000/1000 per 1h0m0s"; got != want {
		t.Errorf("a then b reported\n%s\nwant\n%s", got, want)
	}
	ps.SetWindow(&a, "api", 2*time.Minute, report)
	if got, want := take(), "api 100/100 per 2m0s"; got != want {
		t.Errorf("a's window changed: reported\n%s\nwant\n%s", got, want)
	}
	ps.RemoveLimits(&a, "api", report)
	if got, want := take(), "api 1000/1000 per 1h0m0s"; got != want {
		t.Errorf("a removed the name: reported\n%s\nwant\n%s", got, want)
	}
	if got := ps.AppendLimits(nil); len(got) != 1 || got[0].Window != time.Hour || got[0].Limit != 1000 {
		t.Errorf("AppendLimits = %+v, want api 1000 per 1h", got)
	}
}
