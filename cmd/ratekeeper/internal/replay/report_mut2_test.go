package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestShare: part/whole, 0 for an empty whole.
func TestShare(t *testing.T) {
	for _, tc := range []struct {
		part, whole int64
		want        float64
	}{{1, 4, 0.25}, {3, 3, 1}, {0, 5, 0}, {2, 0, 0}} {
		if got := Share(tc.part, tc.whole); got != tc.want {
			t.Errorf("Share(%d, %d) = %g, want %g", tc.part, tc.whole, got, tc.want)
		}
	}
}

// TestLateLinesSortedForRates: without reordering (Reorder < 0) a line
// logged after a later one is replayed late, but the requests per key per
// window and the trials take every request at its time: 0 s and 10 s
// fall in one window of a minute, 70 s in the next. The report's reorder
// window is then 0, not the negative option.
func TestLateLinesSortedForRates(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m, algorithm: fixed_window}\n"
	rep := replayEntries(t, doc, Options{Reorder: -1}, []logparse.Entry{
		at(0, "192.0.2.1", "/"), at(70, "192.0.2.1", "/"), at(10, "192.0.2.1", "/")})
	if rep.Late != 1 || rep.Reorder != 0 {
		t.Errorf("late %d, reorder window %s; want 1, 0s", rep.Late, rep.Reorder)
	}
	p := rep.Policies[0]
	if p.Rates.Windows != 2 || p.Rates.Max != 2 {
		t.Errorf("%d key-windows, max %d per window; want 2, 2 (0 s and 10 s in one minute)", p.Rates.Windows, p.Rates.Max)
	}
	// At the configured 1 per minute, 10 s is refused after 0 s.
	if p.Limits[0].Rejected != 1 {
		t.Errorf("configured trial rejected %d, want 1", p.Limits[0].Rejected)
	}
	var b strings.Builder
	if err := rep.WriteText(&b, Input{Files: []string{"a"}, Lines: 3, Entries: 3}); err != nil {
		t.Fatal(err)
	}
	if want := "by more than the reorder window (0s), by up to 1m0s"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

// TestLimitsOnlyWithRequests: a policy that decided no request gets no
// trials (nothing to suggest from); one that decided a single request
// gets the configured limit and the three suggestions.
func TestLimitsOnlyWithRequests(t *testing.T) {
	const doc = "policies:\n  - {name: a, limit: 5, window: 1m, routes: [\"GET /a\"]}\n  - {name: b, limit: 5, window: 1m, routes: [\"GET /b\"]}\n"
	rep := replayEntries(t, doc, Options{Compare: true}, []logparse.Entry{at(0, "192.0.2.1", "/a")})
	a, b := rep.Policies[0], rep.Policies[1]
	if a.Requests != 1 || len(a.Limits) != 4 || len(a.Compare) == 0 {
		t.Errorf("policy a: %d requests, %d limits, %d algorithms; want 1, 4, some", a.Requests, len(a.Limits), len(a.Compare))
	}
	if b.Requests != 0 || len(b.Limits) != 0 || len(b.Compare) != 0 {
		t.Errorf("policy b: %d requests, %d limits, %d algorithms; want none", b.Requests, len(b.Limits), len(b.Compare))
	}
}

// TestComparedSeriesNamed: each compared timeline is named after its
// algorithm, as the chart labels it, in the order of Compare, and counts
// that algorithm's decisions: every request, its rejections as rejected.
func TestComparedSeriesNamed(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	p := replayEntries(t, doc, Options{Compare: true}, []logparse.Entry{at(0, "192.0.2.1", "/"), at(1, "192.0.2.1", "/")}).Policies[0]
	if len(p.Compared) == 0 || len(p.Compared) != len(p.Compare) {
		t.Fatalf("%d compared timelines for %d algorithms", len(p.Compared), len(p.Compare))
	}
	for i, s := range p.Compared {
		if s.Name == "" || s.Name != p.Compare[i].Label || s.Name != string(p.Compare[i].Spec.Algorithm) {
			t.Errorf("timeline %d named %q, want its algorithm %s", i, s.Name, p.Compare[i].Spec.Algorithm)
		}
		var adm, rej int64
		for j := range s.Admitted {
			adm, rej = adm+s.Admitted[j], rej+s.Rejected[j]
		}
		if adm+rej != p.Requests || rej != p.Compare[i].Rejected {
			t.Errorf("timeline %s: %d admitted, %d rejected; want %d requests, %d rejected", s.Name, adm, rej, p.Requests, p.Compare[i].Rejected)
		}
	}
}

// TestSuggestionsInvalidForStoreLeftOut: a leaky_queue of 10 per
// millisecond holding up to 24 h queues 864 000 000 requests; at 12 per
// millisecond (P99 x 2 of 6 requests at one instant) it would queue more
// than the store allows, so that suggestion is left out, not replayed.
func TestSuggestionsInvalidForStoreLeftOut(t *testing.T) {
	const doc = "policies:\n  - {name: q, algorithm: leaky_queue, limit: 10, window: 1ms, max_delay: 24h}\n"
	var entries []logparse.Entry
	for range 6 {
		entries = append(entries, at(0, "192.0.2.1", "/"))
	}
	p := replayEntries(t, doc, Options{}, entries).Policies[0]
	var labels []string
	for _, l := range p.Limits {
		labels = append(labels, l.Label)
	}
	if got := strings.Join(labels, ", "); got != "configured, P95 x 1.2, P95 x 1.5" {
		t.Errorf("limits %s; want configured, P95 x 1.2, P95 x 1.5", got)
	}
}

// TestSuggestionAtLeastOne: a policy that counts only failed responses and
// saw none counts no request per key, yet its suggestions are limits of at
// least 1, not the invalid 0.
func TestSuggestionAtLeastOne(t *testing.T) {
	p := replayStatuses(t, "login", "failed", Options{}, "POST /login", 200, 200, 200)
	if p.Rates.P95 != 0 || len(p.Limits) != 4 {
		t.Fatalf("P95 %d, %d limits; want 0, 4", p.Rates.P95, len(p.Limits))
	}
	for _, l := range p.Limits[1:] {
		if l.Spec.Limit != 1 {
			t.Errorf("%s: limit %d, want 1", l.Label, l.Spec.Limit)
		}
	}
}

// TestTopKeysOrder: the most rejected keys come most rejected first,
// whatever order the keys came in and however they sort by name; keys
// rejected as often come by name. 192.0.2.2 comes first and is rejected
// 3 times, 192.0.2.1 once, 192.0.2.3 and 192.0.2.0 twice.
func TestTopKeysOrder(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1h}\n"
	var entries []logparse.Entry
	for _, c := range []struct {
		addr string
		n    int
	}{{"192.0.2.2", 4}, {"192.0.2.1", 2}, {"192.0.2.3", 3}, {"192.0.2.0", 3}} {
		for range c.n {
			entries = append(entries, at(float64(len(entries)), c.addr, "/"))
		}
	}
	p := replayEntries(t, doc, Options{}, entries).Policies[0]
	want := []KeyCount{{"192.0.2.2", 3}, {"192.0.2.0", 2}, {"192.0.2.3", 2}, {"192.0.2.1", 1}}
	if fmt.Sprint(p.Top) != fmt.Sprint(want) {
		t.Errorf("top keys %v, want %v", p.Top, want)
	}
}
