package otelmetrics_test

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReadmeInstruments: the README's OpenTelemetry bullet names every
// instrument the package records, and no other, and says the durations
// are in seconds.
func TestReadmeInstruments(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n- **OpenTelemetry**")
	if i < 0 {
		t.Fatal("README.md has no OpenTelemetry bullet")
	}
	section := s[i+1:]
	if j := strings.Index(section, "\n- "); j >= 0 {
		section = section[:j]
	}
	var readme []string
	for _, m := range regexp.MustCompile("`(ratekeeper\\.[a-z_.]+)`").FindAllStringSubmatch(section, -1) {
		readme = append(readme, m[1])
	}
	sort.Strings(readme)
	for _, hist := range []string{"ratekeeper.decision.duration", "ratekeeper.hold.duration"} {
		if !strings.Contains(section, "`"+hist+"`\n  (seconds)") && !strings.Contains(section, "`"+hist+"` (seconds)") {
			t.Errorf("README.md's OpenTelemetry bullet does not give %s in seconds:\n%s", hist, section)
		}
	}

	obs, reader := newObserver(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(memStore(t), []*policy.Policy{login}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	if code := get(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), "/"); code != 200 { // given back
		t.Fatalf("status %d", code)
	}
	// A request held by a leaky_queue (the second of two), for the hold's
	// instrument, made at its first hold.
	metrictest.HoldOnce(t, obs)
	var recorded []string
	for _, sm := range collectRaw(t, reader).ScopeMetrics {
		for _, mt := range sm.Metrics {
			recorded = append(recorded, mt.Name)
			if strings.HasSuffix(mt.Name, ".duration") && mt.Unit != "s" {
				t.Errorf("%s: unit %q, want s", mt.Name, mt.Unit)
			}
		}
	}
	sort.Strings(recorded)
	if !slices.Equal(readme, recorded) {
		t.Errorf("README.md lists\n  %s\nthe package records\n  %s", strings.Join(readme, "\n  "), strings.Join(recorded, "\n  "))
	}
}
