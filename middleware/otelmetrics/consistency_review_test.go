package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// promSeries returns every series of reg as "name{k=v,...} value", sorted,
// with a histogram as its _count, _sum (in µs, rounded) and _bucket
// series (each "name_bucket{k=v,...}{le=bound}").
func promSeries(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := promLabels(m.GetLabel())
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out = append(out, fmt.Sprintf("%s%s %v", mf.GetName(), labels, m.GetCounter().GetValue()))
			case dto.MetricType_GAUGE:
				out = append(out, fmt.Sprintf("%s%s %v", mf.GetName(), labels, m.GetGauge().GetValue()))
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out = append(out, fmt.Sprintf("%s_count%s %d", mf.GetName(), labels, h.GetSampleCount()),
					fmt.Sprintf("%s_sum%s %.0fµs", mf.GetName(), labels, h.GetSampleSum()*1e6))
				for _, b := range h.GetBucket() {
					out = append(out, fmt.Sprintf("%s_bucket%s{le=%v} %d", mf.GetName(), labels, b.GetUpperBound(), b.GetCumulativeCount()))
				}
			default:
				t.Errorf("%s: unexpected type %v", mf.GetName(), mf.GetType())
			}
		}
	}
	sort.Strings(out)
	return out
}

func promLabels(lps []*dto.LabelPair) string {
	var parts []string
	for _, lp := range lps {
		parts = append(parts, lp.GetName()+"="+lp.GetValue())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// otelAsProm returns every data point of reader's collection in
// promSeries' form, the instruments' names translated to Prometheus names
// as the package doc says the OpenTelemetry specification translates
// them: "." to "_", _total added to a counter, unit "s" made _seconds.
func otelAsProm(t *testing.T, rm metricdata.ResourceMetrics) []string {
	t.Helper()
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := strings.ReplaceAll(m.Name, ".", "_")
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s_total%s %v", name, attrString(dp.Attributes), float64(dp.Value)))
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s %v", name, attrString(dp.Attributes), float64(dp.Value)))
				}
			case metricdata.Gauge[float64]:
				if m.Unit != "s" {
					t.Fatalf("%s: unit %q", m.Name, m.Unit)
				}
				for _, dp := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s_seconds%s %v", name, attrString(dp.Attributes), dp.Value))
				}
			case metricdata.Histogram[float64]:
				if m.Unit != "s" {
					t.Fatalf("%s: unit %q", m.Name, m.Unit)
				}
				name += "_seconds"
				for _, dp := range d.DataPoints {
					labels := attrString(dp.Attributes)
					out = append(out, fmt.Sprintf("%s_count%s %d", name, labels, dp.Count),
						fmt.Sprintf("%s_sum%s %.0fµs", name, labels, dp.Sum*1e6))
					var cum uint64
					for i, b := range dp.Bounds {
						cum += dp.BucketCounts[i]
						out = append(out, fmt.Sprintf("%s_bucket%s{le=%v} %d", name, labels, b, cum))
					}
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestSameSignalsAsPrometheus: prommetrics and otelmetrics observing the
// same middlewares, through every outcome (allowed, denied, shadow
// denied, a missing key, a cost out of range, a store failure failing
// open, closed, to the fallback store and shadowed, the circuit breaker
// open, an abandoned request, shadowed or not), give-backs, SetLimit, a
// policy's removal, a policy that served no request (its series at
// zero), and leaky_queue holds (one served, one cut short by its client,
// one refused at once for its deadline, none in shadow mode), report the
// same series with the same values, their names translated as
// otelmetrics' package doc says, but for the histograms, which
// prommetrics names ratekeeper_decision_seconds and
// ratekeeper_hold_seconds.
func TestSameSignalsAsPrometheus(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	pm, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	obs, reader := newObserver(t)
	clock := &stepClock{}
	both := middleware.WithObserver(pm, obs)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	type mw struct {
		m     *middleware.Middleware
		store *switchable
	}
	build := func(policies []*policy.Policy, opts ...middleware.Option) mw {
		store := &switchable{Store: memStore(t)}
		opts = append([]middleware.Option{both, middleware.WithClock(clock), middleware.WithBreaker(0, 0)}, opts...)
		m := middleware.MustNew(store, policies, opts...)
		metrictest.KeepAlive(t, m) // its limits and failure state read at the end
		return mw{m, store}
	}
	do := func(x mw, path string, ctx context.Context, header ...string) int {
		h := x.m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/fail" {
				w.WriteHeader(http.StatusUnauthorized)
			}
		}))
		r := httptest.NewRequest("GET", path, nil).WithContext(ctx)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	bg := context.Background()
	costly := policy.Must(policy.New("costly", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, remote,
		policy.WithCost(func(r *http.Request) int64 {
			if r.URL.Path == "/huge" {
				return 11
			}
			return 1
		})))
	login := policy.Must(policy.New("login", fixed("x", 5, remote).Spec(), remote, policy.CountIf(policy.CountFailed)))

	enforcing := build([]*policy.Policy{fixed("per-ip", 2, remote), fixed("per-user", 100, user), costly},
		middleware.OnStoreError(middleware.FallBack(memStore(t))))
	shadow := build([]*policy.Policy{fixed("shadowed", 1, remote)}, middleware.WithShadow(nil),
		middleware.OnStoreError(middleware.FailClosed(time.Second)))
	open := build([]*policy.Policy{fixed("open", 10, remote)}, middleware.OnStoreError(middleware.FailOpen()))
	broken := build([]*policy.Policy{fixed("broken", 10, remote)}, middleware.WithBreaker(1, time.Minute))
	build([]*policy.Policy{fixed("idle", 10, remote)}) // serves no request
	giving := mw{m: middleware.MustNew(memStore(t), []*policy.Policy{login}, both, middleware.WithClock(clock))}
	metrictest.KeepAlive(t, giving.m)
	closed := build([]*policy.Policy{fixed("closed", 10, remote), fixed("removed", 10, remote)},
		middleware.OnStoreError(middleware.FailClosed(time.Second)))

	for i, want := range []int{200, 200, 429} {
		if code := do(enforcing, "/", bg, "X-User", "ann"); code != want {
			t.Fatalf("enforcing request %d: %d, want %d", i, code, want)
		}
	}
	if code := do(enforcing, "/", bg); code != http.StatusBadRequest {
		t.Fatalf("no user: %d", code)
	}
	if code := do(enforcing, "/huge", bg, "X-User", "ann"); code != http.StatusTooManyRequests {
		t.Fatalf("cost out of range: %d", code)
	}
	if code := do(enforcing, "/", gone, "X-User", "ann"); code != http.StatusServiceUnavailable {
		t.Fatalf("abandoned: %d", code)
	}
	enforcing.store.down.Store(true)
	if code := do(enforcing, "/", bg, "X-User", "bob"); code != 200 { // the fallback store decides
		t.Fatalf("fallback: %d", code)
	}
	for _, path := range []string{"/", "/fail"} { // "/" gives back
		if code, want := do(giving, path, bg), map[string]int{"/": 200, "/fail": 401}[path]; code != want {
			t.Fatalf("login %s: %d, want %d", path, code, want)
		}
	}
	for range 2 {
		do(shadow, "/", bg)
	}
	do(shadow, "/", gone)
	shadow.store.down.Store(true)
	do(shadow, "/", bg)
	open.store.down.Store(true)
	do(open, "/", bg)
	broken.store.down.Store(true)
	do(broken, "/", bg) // fails: opens the breaker
	do(broken, "/", bg) // kept from the store
	closed.store.down.Store(true)
	if code := do(closed, "/", bg); code != http.StatusServiceUnavailable {
		t.Fatalf("failed closed: %d", code)
	}
	// Holds: the second request held 1 s, the third cut short 250 ms in by
	// its client, the fourth refused at once (its deadline before its
	// turn), and a shadow middleware's queue holding nothing.
	metrictest.Holds{Queue: "queue", Beside: "beside", Shadowed: "shadow-queue"}.Run(t, pm, middleware.WithObserver(obs))
	if err := enforcing.m.SetLimit("per-ip", 1); err != nil {
		t.Fatal(err)
	}
	if err := closed.m.SetPolicies([]*policy.Policy{closed.m.Configured("closed")}); err != nil {
		t.Fatal(err)
	}

	got := otelAsProm(t, collectRaw(t, reader))
	want := promSeries(t, reg)
	for i, s := range want { // prommetrics' names of the histograms
		s = strings.Replace(s, "ratekeeper_decision_seconds", "ratekeeper_decision_duration_seconds", 1)
		want[i] = strings.Replace(s, "ratekeeper_hold_seconds", "ratekeeper_hold_duration_seconds", 1)
	}
	if !slices.Equal(got, want) {
		t.Errorf("otelmetrics, translated:\n%s\nprommetrics:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The scenario reached what it is meant to compare.
	for _, s := range []string{
		"ratekeeper_requests_total{outcome=shadow_denied,policy=shadowed} 1",
		"ratekeeper_requests_total{outcome=abandoned,policy=per-ip} 1",
		"ratekeeper_requests_total{outcome=abandoned,policy=shadowed} 0",
		"ratekeeper_errors_total{kind=cost,policy=costly} 1",
		"ratekeeper_errors_total{kind=key,policy=per-user} 1",
		"ratekeeper_errors_total{kind=store,policy=open} 1",
		"ratekeeper_errors_total{kind=store,policy=closed} 1",
		"ratekeeper_errors_total{kind=store,policy=broken} 2",
		"ratekeeper_errors_total{kind=store,policy=shadowed} 1",
		"ratekeeper_given_back_total{policy=login} 1",
		"ratekeeper_effective_limit{policy=per-ip} 1",
		"ratekeeper_failure_state{state=healthy} 0",
		"ratekeeper_requests_total{outcome=denied,policy=idle} 0",
		"ratekeeper_hold_duration_seconds_count{outcome=allowed,policy=queue} 1",
		"ratekeeper_hold_duration_seconds_sum{outcome=allowed,policy=queue} 1000000µs",
		"ratekeeper_hold_duration_seconds_bucket{outcome=allowed,policy=queue}{le=1} 1",
		"ratekeeper_hold_duration_seconds_count{outcome=abandoned,policy=queue} 1",
		"ratekeeper_hold_duration_seconds_sum{outcome=abandoned,policy=queue} 250000µs",
		"ratekeeper_hold_duration_seconds_bucket{outcome=abandoned,policy=queue}{le=0.1} 0",
		"ratekeeper_hold_duration_seconds_bucket{outcome=abandoned,policy=queue}{le=0.25} 1",
	} {
		if !slices.Contains(want, s) {
			t.Errorf("prommetrics lacks %q", s)
		}
	}
	if slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "_limit{policy=removed}") }) {
		t.Error("the removed policy's limit gauges are still reported")
	}
	if slices.ContainsFunc(want, func(s string) bool {
		return strings.HasPrefix(s, "ratekeeper_hold_") && !strings.Contains(s, "policy=queue}")
	}) {
		t.Error("a policy that held no request has hold series")
	}
}
