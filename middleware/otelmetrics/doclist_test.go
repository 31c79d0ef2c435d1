package otelmetrics_test

import (
	"go/parser"
	"go/token"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPackageDocListsWhatIsRecorded: the list of instruments in the
// package comment names every instrument a collection returns, with its
// attributes, its kind and its unit, and no other. The collection follows
// a request given back and a hold, so that every instrument has points.
func TestPackageDocListsWhatIsRecorded(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "otelmetrics.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	// "\tname{attrs}  kind (unit): ...", the kind on the next line when
	// the name fills the first.
	name := regexp.MustCompile(`^\t(ratekeeper\.[a-z_.]+)(\{[a-z,]+\})?\s*(.*)$`)
	kind := regexp.MustCompile(`^(counter|histogram|observable gauge) \(([^)]*)\)`)
	docLines := strings.Split(f.Doc.Text(), "\n")
	var documented []string
	for i, l := range docLines {
		m := name.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rest := m[3]
		if rest == "" && i+1 < len(docLines) {
			rest = strings.TrimSpace(docLines[i+1])
		}
		k := kind.FindStringSubmatch(rest)
		if k == nil {
			t.Errorf("package comment: %s: no kind and unit in %q", m[1], rest)
			continue
		}
		documented = append(documented, m[1]+attrSet(m[2])+" "+k[1]+" "+k[2])
	}
	sort.Strings(documented)
	if len(documented) == 0 {
		t.Fatal("no instrument found in the package comment")
	}

	obs, reader := newObserver(t)
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(memStore(t), []*policy.Policy{login}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	if code := get(m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), "/"); code != http.StatusOK { // given back
		t.Fatalf("status %d", code)
	}
	metrictest.HoldOnce(t, obs)
	var recorded []string
	for _, sm := range collectRaw(t, reader).ScopeMetrics {
		for _, mt := range sm.Metrics {
			var k string
			var keys []string
			add := func(s []string) {
				if keys == nil {
					keys = s
				}
			}
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				k = "counter"
				for _, dp := range d.DataPoints {
					add(attrKeys(dp.Attributes.ToSlice()))
				}
			case metricdata.Gauge[int64]:
				k = "observable gauge"
				for _, dp := range d.DataPoints {
					add(attrKeys(dp.Attributes.ToSlice()))
				}
			case metricdata.Gauge[float64]:
				k = "observable gauge"
				for _, dp := range d.DataPoints {
					add(attrKeys(dp.Attributes.ToSlice()))
				}
			case metricdata.Histogram[float64]:
				k = "histogram"
				for _, dp := range d.DataPoints {
					add(attrKeys(dp.Attributes.ToSlice()))
				}
			default:
				t.Fatalf("%s: unexpected data %T", mt.Name, mt.Data)
			}
			s := ""
			if len(keys) > 0 {
				s = "{" + strings.Join(keys, ",") + "}"
			}
			recorded = append(recorded, mt.Name+s+" "+k+" "+mt.Unit)
		}
	}
	sort.Strings(recorded)
	if !slices.Equal(documented, recorded) {
		t.Errorf("the package comment lists\n  %s\na collection returns\n  %s", strings.Join(documented, "\n  "), strings.Join(recorded, "\n  "))
	}
}

// attrSet returns "{a,b}" with its keys sorted; "" for "".
func attrSet(s string) string {
	if s == "" {
		return ""
	}
	keys := strings.Split(strings.Trim(s, "{}"), ",")
	sort.Strings(keys)
	return "{" + strings.Join(keys, ",") + "}"
}

// attrKeys returns the keys of kvs, sorted.
func attrKeys(kvs []attribute.KeyValue) []string {
	keys := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		keys = append(keys, string(kv.Key))
	}
	sort.Strings(keys)
	return keys
}
