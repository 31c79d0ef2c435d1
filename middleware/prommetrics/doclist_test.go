package prommetrics_test

import (
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPackageDocListsWhatIsScraped: the list of metrics in the package
// comment names every metric a scrape of /metrics (promhttp) returns, with
// its labels and its type, and no other: an operator writes alerts from
// that list. The scrape follows a request given back and a hold, so that
// given_back_total and hold_seconds have series.
func TestPackageDocListsWhatIsScraped(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "prommetrics.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	line := regexp.MustCompile(`^\t(ratekeeper_[a-z_]+)(\{[a-z,]+\})?\s+(counter|gauge|histogram):`)
	for _, l := range strings.Split(f.Doc.Text(), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			documented = append(documented, m[1]+labelSet(m[2])+" "+m[3])
		}
	}
	sort.Strings(documented)
	if len(documented) == 0 {
		t.Fatal("no metric found in the package comment")
	}

	reg, metrics, mem := metricsAndStore(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(mem, []*policy.Policy{login}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	serve(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))) // given back
	metrictest.HoldOnce(t, metrics)                                                 // a hold

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing the scrape: %v\n%s", err, body)
	}
	var scraped []string
	for name, mf := range mfs {
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		s := ""
		if len(labels) > 0 {
			s = "{" + strings.Join(labels, ",") + "}"
		}
		scraped = append(scraped, name+labelSet(s)+" "+strings.ToLower(mf.GetType().String()))
	}
	sort.Strings(scraped)
	if !slices.Equal(documented, scraped) {
		t.Errorf("the package comment lists\n  %s\na scrape returns\n  %s", strings.Join(documented, "\n  "), strings.Join(scraped, "\n  "))
	}
}

// labelSet returns "{a,b}" with its labels sorted; "" for "".
func labelSet(s string) string {
	if s == "" {
		return ""
	}
	labels := strings.Split(strings.Trim(s, "{}"), ",")
	sort.Strings(labels)
	return "{" + strings.Join(labels, ",") + "}"
}
