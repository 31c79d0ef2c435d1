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
