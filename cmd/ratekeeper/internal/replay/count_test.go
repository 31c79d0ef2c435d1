package replay

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestCountFailed replays a login policy that counts only failed
// responses (count: failed), 2 per minute: five logged successes and then
// three failures of one client in a second. The successes are given back
// (none refused), two failures pass and the third is refused, in the
// replay and in each algorithm compared; counting every response, the
// third success would already be refused.
func TestCountFailed(t *testing.T) {
	for _, tc := range []struct {
		count    string
		rejected int64
	}{{"failed", 1}, {"all", 6}} {
		cfg := parse(t, "policies:\n  - {name: login, limit: 2, window: 1m, algorithm: sliding_log, count: "+tc.count+"}\n")
		e, err := New(cfg, Options{Compare: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, status := range []int{200, 200, 200, 200, 200, 401, 401, 401} {
			en := logparse.Entry{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Addr: "192.0.2.1", Method: "POST", Path: "/login", Status: status}
			if err := e.Add(&en); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := e.Finish()
		if err != nil {
			t.Fatal(err)
		}
		p := rep.Policies[0]
		if p.Requests != 8 || p.Rejected != tc.rejected {
			t.Errorf("count: %s: requests %d rejected %d, want 8, %d", tc.count, p.Requests, p.Rejected, tc.rejected)
		}
		if len(p.Compare) == 0 {
			t.Fatalf("count: %s: no algorithms compared", tc.count)
		}
		for _, c := range p.Compare {
			if c.Rejected != tc.rejected {
				t.Errorf("count: %s: %s rejected %d, want %d", tc.count, c.Label, c.Rejected, tc.rejected)
			}
		}
	}
}

// TestCountFailedRates: the requests per key per window, and the limits
// suggested from them, count only the requests the policy counts. One
// client's five logged successes and three failures in one minute are,
// under count: failed, 3 counted requests (P99 x 2 suggests 6 failures a
// minute), and 8 under count: all (16).
func TestCountFailedRates(t *testing.T) {
	for _, tc := range []struct {
		count     string
		max, p99x int64
	}{{"failed", 3, 6}, {"all", 8, 16}} {
		cfg := parse(t, "policies:\n  - {name: login, limit: 2, window: 1m, algorithm: sliding_log, count: "+tc.count+"}\n")
		e, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, status := range []int{200, 200, 200, 200, 200, 401, 401, 401} {
			en := logparse.Entry{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Addr: "192.0.2.1", Method: "POST", Path: "/login", Status: status}
			if err := e.Add(&en); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := e.Finish()
		if err != nil {
			t.Fatal(err)
		}
		p := rep.Policies[0]
		if p.Rates.Max != tc.max || p.Rates.P99 != tc.max || p.Rates.Peak.P99 != tc.max {
			t.Errorf("count: %s: rates %+v, want max, P99 and peak P99 %d", tc.count, p.Rates, tc.max)
		}
		var got int64
		for _, l := range p.Limits {
			if l.Label == "P99 x 2" {
				got = l.Spec.Limit
			}
		}
		if got != tc.p99x {
			t.Errorf("count: %s: P99 x 2 suggests %d, want %d", tc.count, got, tc.p99x)
		}
	}
}
