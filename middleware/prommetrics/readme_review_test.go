package prommetrics_test

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

// readmeSection returns the text of README.md from the line starting with
// from up to the line starting with to.
func readmeSection(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+from)
	if i < 0 {
		t.Fatalf("README.md has no line starting with %q", from)
	}
	s = s[i+1:]
	j := strings.Index(s, "\n"+to)
	if j < 0 {
		t.Fatalf("README.md has no line starting with %q after %q", to, from)
	}
	return s[:j]
}

// TestReadmeMetrics: the README's Metrics bullet names every metric the
// package exports, with its labels, and no other (given_back_total and
// hold_seconds once a request was given back and one was held).
func TestReadmeMetrics(t *testing.T) {
	section := readmeSection(t, "- **Metrics**", "- **OpenTelemetry**")
	var readme []string
	for _, m := range regexp.MustCompile("`(ratekeeper_[a-z_]+)(\\{[a-z,]+\\})?`").FindAllStringSubmatch(section, -1) {
		readme = append(readme, m[1]+m[2])
	}
	sort.Strings(readme)

	reg, metrics, mem := metricsAndStore(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(mem, []*policy.Policy{login}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	serve(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))) // given back
	metrictest.HoldOnce(t, metrics)                                                 // a hold
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, mf := range mfs {
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		name := mf.GetName()
		if len(labels) > 0 {
			name += "{" + strings.Join(labels, ",") + "}"
		}
		exported = append(exported, name)
	}
	sort.Strings(exported)
	// The README writes requests_total's labels {policy,outcome}, the
	// client sorts them: compare the sets of labels.
	norm := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			if k := strings.IndexByte(n, '{'); k >= 0 {
				labels := strings.Split(strings.Trim(n[k:], "{}"), ",")
				sort.Strings(labels)
				n = n[:k] + "{" + strings.Join(labels, ",") + "}"
			}
			out[i] = n
		}
		return out
	}
	if got, want := norm(readme), norm(exported); !slices.Equal(got, want) {
		t.Errorf("README.md lists\n  %s\nthe package exports\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
