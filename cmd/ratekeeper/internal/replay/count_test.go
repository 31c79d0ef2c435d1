package replay

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// replayStatuses replays, under a policy name of 2 per minute (sliding_log)
// with the given count:, one client's requests to route ("METHOD /path"),
// 100 ms apart, logged with the given statuses, and returns the policy's
// report.
func replayStatuses(t *testing.T, name, count string, opts Options, route string, statuses ...int) PolicyReport {
	t.Helper()
	return replayLogged(t, "policies:\n  - {name: "+name+", limit: 2, window: 1m, algorithm: sliding_log, count: "+count+"}\n",
		opts, route, 100*time.Millisecond, statuses...)
}

// replayLogged replays config (YAML) over one client's requests to route,
// gap apart from t0, one per status, and returns the first policy's
// report.
func replayLogged(t *testing.T, config string, opts Options, route string, gap time.Duration, statuses ...int) PolicyReport {
	t.Helper()
	e, err := New(parse(t, config), opts)
	if err != nil {
		t.Fatal(err)
	}
	method, path, _ := strings.Cut(route, " ")
	for i, status := range statuses {
		en := logparse.Entry{Time: t0.Add(time.Duration(i) * gap), Addr: "192.0.2.1", Method: method, Path: path, Status: status}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return rep.Policies[0]
}

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
		p := replayStatuses(t, "login", tc.count, Options{Compare: true}, "POST /login", 200, 200, 200, 200, 200, 401, 401, 401)
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
		p := replayStatuses(t, "login", tc.count, Options{}, "POST /login", 200, 200, 200, 200, 200, 401, 401, 401)
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

// TestCountLogged429: a logged 429 is most likely the production rate
// limiter's answer, not the handler's, so its handler status is unknown,
// and the request counts under every count:, as a line without a status
// does. One client's three logged 429s and then two 200s in a second,
// under a limit of 2 a minute: the third 429 and both 200s are refused
// whatever the count, the same as with the 429s logged without a status,
// and the client's counted requests in the minute are the five (three
// under count: failed, which leaves out the 200s). Under count: succeeded
// the 429s were given back as failures: nothing was refused, and the
// client's rate was 2 a minute.
func TestCountLogged429(t *testing.T) {
	for _, tc := range []struct {
		count string
		rate  int64
	}{{"all", 5}, {"failed", 3}, {"succeeded", 5}} {
		for _, limited := range []int{http.StatusTooManyRequests, 0} {
			count := tc.count
			p := replayStatuses(t, "quota", count, Options{}, "GET /work", limited, limited, limited, 200, 200)
			if p.Requests != 5 || p.Rejected != 3 || p.Rates.Max != tc.rate {
				t.Errorf("count: %s, the first three logged with status %d: requests %d, rejected %d, at most %d per key per window; want 5, 3, %d",
					count, limited, p.Requests, p.Rejected, p.Rates.Max, tc.rate)
			}
		}
	}
}
