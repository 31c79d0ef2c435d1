package otelmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The fixtures the adapters' tests share (middleware/internal/metrictest).
var (
	t0                  = metrictest.T0
	remote keyfunc.Func = metrictest.Remote
	user   keyfunc.Func = metrictest.User
	fixed               = metrictest.Fixed
)

// stepClock advances 2ms at every reading: each decision takes 2ms.
type stepClock = metrictest.StepClock

// switchable fails while down is set, and fails a Take whose context is
// done, as a network store does.
type switchable struct {
	algorithms.Store
	down atomic.Bool
}

func (s *switchable) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.down.Load() {
		return nil, errors.New("redis: down")
	}
	return s.Store.Take(ctx, checks...)
}

// memStore returns a memory store at t0, closed when the test ends.
func memStore(t *testing.T) *algorithms.MemoryStore {
	t.Helper()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// newObserver returns an Observer on a real SDK MeterProvider and the
// manual reader collecting from it.
func newObserver(t *testing.T, opts ...otelmetrics.Option) (*otelmetrics.Observer, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	obs, err := otelmetrics.New(mp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return obs, reader
}

// router returns a chi router serving "/" and "/huge" through m.
func router(m *middleware.Middleware) http.Handler {
	r := chi.NewRouter()
	r.Use(m.Handler)
	ok := func(http.ResponseWriter, *http.Request) {}
	r.Get("/", ok)
	r.Get("/huge", ok)
	return r
}

// get serves GET path through h, with the header pairs given, and returns
// the status.
func get(h http.Handler, path string, header ...string) int {
	r := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// histogram is what a collection holds of the decision duration.
type histogram struct {
	count  uint64
	sum    float64
	bounds []float64
	counts []uint64
	attrs  string
}

// collect reads the reader and returns every counter and gauge data point
// of the package's scope as "name{k=v,...}" -> value, and the decision
// histogram if it has one data point (the hold histogram is holdPoints').
// It fails the test on an instrument of an unexpected kind or temporality.
func collect(t *testing.T, reader *sdkmetric.ManualReader) (map[string]int64, histogram) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := map[string]int64{}
	var h histogram
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelmetrics.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, otelmetrics.ScopeName)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: not a cumulative monotonic sum", m.Name)
				}
				for _, dp := range d.DataPoints {
					points[m.Name+attrString(dp.Attributes)] = dp.Value
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					points[m.Name+attrString(dp.Attributes)] = dp.Value
				}
			case metricdata.Gauge[float64]:
				if m.Name != "ratekeeper.limit.window" || m.Unit != "s" {
					t.Fatalf("float64 gauge %s (unit %q)", m.Name, m.Unit)
				}
				// see windowPoints
			case metricdata.Histogram[float64]:
				if m.Name == "ratekeeper.hold.duration" && m.Unit == "s" {
					continue // see holdPoints
				}
				if m.Name != "ratekeeper.decision.duration" || m.Unit != "s" {
					t.Fatalf("histogram %s (unit %q)", m.Name, m.Unit)
				}
				if len(d.DataPoints) == 1 { // else see collectRaw
					dp := d.DataPoints[0]
					h = histogram{dp.Count, dp.Sum, dp.Bounds, dp.BucketCounts, attrString(dp.Attributes)}
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return points, h
}

func attrString(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// only returns the points whose name starts with prefix, as sorted
// "name{...} value" lines.
func only(points map[string]int64, prefix string) string {
	var lines []string
	for k, v := range points {
		if strings.HasPrefix(k, prefix) {
			lines = append(lines, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// nonzero is only without the series at zero.
func nonzero(points map[string]int64, prefix string) string {
	var lines []string
	for _, l := range strings.Split(only(points, prefix), "\n") {
		if l != "" && !strings.HasSuffix(l, " 0") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func lines(s ...string) string { return strings.Join(s, "\n") }

// wantLines reports an error, naming what, unless got is the lines of
// want.
func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	if w := lines(want...); got != w {
		t.Errorf("%s:\n%s\nwant\n%s", what, got, w)
	}
}

// TestMetrics: the signals of prommetrics' TestMetrics, through a chi
// router: decisions per policy and outcome, errors per kind, the fallback
// state while the store is down, the limits after SetLimit, and the
// decision histogram (every decision 2ms long).
func TestMetrics(t *testing.T) {
	obs, reader := newObserver(t)
	store := &switchable{Store: memStore(t)}
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 3, remote), fixed("per-user", 100, user)},
		middleware.WithObserver(obs), middleware.WithClock(&stepClock{}),
		middleware.OnStoreError(middleware.FallBack(memStore(t))), middleware.WithBreaker(0, 0))
	metrictest.KeepAlive(t, m)
	h := router(m)

	for i := range 4 { // 3 allowed, 1 denied by per-ip
		if code, want := get(h, "/", "X-User", "ann"), []int{200, 200, 200, 429}[i]; code != want {
			t.Fatalf("request %d: %d, want %d", i, code, want)
		}
	}
	if code := get(h, "/"); code != http.StatusBadRequest { // no user
		t.Fatalf("no user: %d", code)
	}
	points, _ := collect(t, reader)
	wantLines(t, "before a failure", only(points, "ratekeeper.failure_state"),
		"ratekeeper.failure_state{state=closed} 0",
		"ratekeeper.failure_state{state=fallback} 0",
		"ratekeeper.failure_state{state=healthy} 1",
		"ratekeeper.failure_state{state=open} 0",
	)
	store.down.Store(true)
	get(h, "/", "X-User", "bob") // fallback: allowed
	points, _ = collect(t, reader)
	wantLines(t, "while down", only(points, "ratekeeper.failure_state"),
		"ratekeeper.failure_state{state=closed} 0",
		"ratekeeper.failure_state{state=fallback} 1",
		"ratekeeper.failure_state{state=healthy} 0",
		"ratekeeper.failure_state{state=open} 0",
	)
	store.down.Store(false)
	get(h, "/", "X-User", "bob") // primary again: per-ip full, denied
	if err := m.SetLimit("per-ip", 2); err != nil {
		t.Fatal(err)
	}

	points, hist := collect(t, reader)
	wantLines(t, "collected", only(points, "ratekeeper."),
		"ratekeeper.configured_limit{policy=per-ip} 3",
		"ratekeeper.configured_limit{policy=per-user} 100",
		"ratekeeper.effective_limit{policy=per-ip} 2",
		"ratekeeper.effective_limit{policy=per-user} 100",
		"ratekeeper.errors{kind=cost,policy=per-ip} 0",
		"ratekeeper.errors{kind=cost,policy=per-user} 0",
		"ratekeeper.errors{kind=key,policy=per-ip} 0",
		"ratekeeper.errors{kind=key,policy=per-user} 1",
		"ratekeeper.errors{kind=store,policy=per-ip} 1",
		"ratekeeper.errors{kind=store,policy=per-user} 1",
		"ratekeeper.failure_state{state=closed} 0",
		"ratekeeper.failure_state{state=fallback} 0",
		"ratekeeper.failure_state{state=healthy} 1",
		"ratekeeper.failure_state{state=open} 0",
		"ratekeeper.requests{outcome=abandoned,policy=per-ip} 0",
		"ratekeeper.requests{outcome=abandoned,policy=per-user} 0",
		"ratekeeper.requests{outcome=allowed,policy=per-ip} 4",
		"ratekeeper.requests{outcome=allowed,policy=per-user} 4",
		"ratekeeper.requests{outcome=denied,policy=per-ip} 2",
		"ratekeeper.requests{outcome=denied,policy=per-user} 0",
		"ratekeeper.requests{outcome=shadow_denied,policy=per-ip} 0",
		"ratekeeper.requests{outcome=shadow_denied,policy=per-user} 0",
	)
	if hist.count != 7 || hist.sum < 0.0139 || hist.sum > 0.0141 {
		t.Errorf("decision duration: count %d sum %v, want 7 and 0.014", hist.count, hist.sum)
	}
	if !slices.Equal(hist.bounds, otelmetrics.DefaultBuckets) {
		t.Errorf("bounds %v, want DefaultBuckets %v", hist.bounds, otelmetrics.DefaultBuckets)
	}
	// 2ms: every decision in the bucket (0.001, 0.0025].
	i := slices.Index(hist.bounds, 0.0025)
	if i < 0 || hist.counts[i] != 7 {
		t.Errorf("bucket counts %v, want 7 in (0.001, 0.0025]", hist.counts)
	}
	if hist.attrs != "{}" {
		t.Errorf("histogram attributes %s, want none", hist.attrs)
	}
}

// TestOutcomesCounted: each outcome of the middleware, in an Observer of
// its own, gives exactly the series prommetrics counts for it (and the
// histogram one decision): allowed and the denials in requests, a missing
// key, a cost out of range and a store failure (open, closed, or shadowed)
// in errors, and an abandoned request (its client gone before the
// decision) in requests as outcome abandoned, not in errors.
func TestOutcomesCounted(t *testing.T) {
	costly := func(name string) *policy.Policy {
		return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, user,
			policy.WithCost(func(r *http.Request) int64 {
				if r.URL.Path == "/huge" {
					return 2
				}
				return 1
			})))
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		pre     int // allowed requests before the one observed
		opts    []middleware.Option
		down    bool
		path    string
		noUser  bool
		ctx     context.Context
		outcome middleware.Outcome
		status  int
		want    string
	}{
		{name: "allowed", outcome: middleware.Allowed, status: 200,
			want: "ratekeeper.requests{outcome=allowed,policy=p} 1"},
		{name: "denied", pre: 1, outcome: middleware.Denied, status: 429,
			want: lines("ratekeeper.requests{outcome=allowed,policy=p} 1", "ratekeeper.requests{outcome=denied,policy=p} 1")},
		{name: "shadow denied", pre: 1, opts: []middleware.Option{middleware.WithShadow(nil)}, outcome: middleware.ShadowDenied, status: 200,
			want: lines("ratekeeper.requests{outcome=allowed,policy=p} 1", "ratekeeper.requests{outcome=shadow_denied,policy=p} 1")},
		{name: "cost out of range", path: "/huge", outcome: middleware.Denied, status: 429,
			want: "ratekeeper.errors{kind=cost,policy=p} 1"},
		{name: "shadow cost", path: "/huge", opts: []middleware.Option{middleware.WithShadow(nil)}, outcome: middleware.ShadowDenied, status: 200,
			want: "ratekeeper.errors{kind=cost,policy=p} 1"},
		{name: "key rejected", noUser: true, outcome: middleware.KeyRejected, status: 400,
			want: "ratekeeper.errors{kind=key,policy=p} 1"},
		{name: "failed open", down: true, opts: []middleware.Option{middleware.OnStoreError(middleware.FailOpen())}, outcome: middleware.FailedOpen, status: 200,
			want: "ratekeeper.errors{kind=store,policy=p} 1"},
		{name: "failed closed", down: true, opts: []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, outcome: middleware.FailedClosed, status: 503,
			want: "ratekeeper.errors{kind=store,policy=p} 1"},
		{name: "shadowed store failure", down: true, opts: []middleware.Option{middleware.WithShadow(nil), middleware.OnStoreError(middleware.FailClosed(time.Second))}, outcome: middleware.ShadowDenied, status: 200,
			want: "ratekeeper.errors{kind=store,policy=p} 1"},
		{name: "abandoned", ctx: gone, outcome: middleware.Abandoned, status: 503,
			want: "ratekeeper.requests{outcome=abandoned,policy=p} 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, reader := newObserver(t)
			var seen []middleware.Outcome
			store := &switchable{Store: memStore(t)}
			opts := append([]middleware.Option{middleware.WithObserver(obs, outcomes(&seen)), middleware.WithBreaker(0, 0)}, tc.opts...)
			m := middleware.MustNew(store, []*policy.Policy{costly("p")}, opts...)
			metrictest.KeepAlive(t, m)
			for range tc.pre {
				if code := get(router(m), "/", "X-User", "ann"); code != 200 {
					t.Fatalf("request before: %d", code)
				}
			}
			seen = nil
			store.down.Store(tc.down)
			path := "/"
			if tc.path != "" {
				path = tc.path
			}
			r := httptest.NewRequest("GET", path, nil)
			if !tc.noUser {
				r.Header.Set("X-User", "ann")
			}
			if tc.ctx != nil {
				r = r.WithContext(tc.ctx)
			}
			w := httptest.NewRecorder()
			router(m).ServeHTTP(w, r)
			if w.Code != tc.status || !slices.Equal(seen, []middleware.Outcome{tc.outcome}) {
				t.Fatalf("status %d, outcomes %v; want %d, [%v]", w.Code, seen, tc.status, tc.outcome)
			}
			points, hist := collect(t, reader)
			got := nonzero(points, "ratekeeper.errors")
			if r := nonzero(points, "ratekeeper.requests"); r != "" {
				got = strings.TrimPrefix(got+"\n"+r, "\n")
			}
			if got != tc.want {
				t.Errorf("counted:\n%s\nwant\n%s", got, tc.want)
			}
			if want := uint64(tc.pre + 1); hist.count != want {
				t.Errorf("decision duration count %d, want %d", hist.count, want)
			}
		})
	}

	// Denied by one of two policies: only that one counts a denial.
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("tight", 1, user), fixed("loose", 10, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	get(h, "/", "X-User", "ann")
	if code := get(h, "/", "X-User", "ann"); code != 429 {
		t.Fatalf("second request: %d", code)
	}
	points, _ := collect(t, reader)
	wantLines(t, "two policies", nonzero(points, "ratekeeper.requests"),
		"ratekeeper.requests{outcome=allowed,policy=loose} 1",
		"ratekeeper.requests{outcome=allowed,policy=tight} 1",
		"ratekeeper.requests{outcome=denied,policy=tight} 1",
	)
}

// outcomes is an Observer appending each request's outcome to *seen.
type outcomeRecorder struct{ seen *[]middleware.Outcome }

func outcomes(seen *[]middleware.Outcome) middleware.Observer { return outcomeRecorder{seen} }

func (o outcomeRecorder) ObserveRequest(e middleware.Event)    { *o.seen = append(*o.seen, e.Outcome) }
func (outcomeRecorder) ObserveState(from, to middleware.State) {}
func (outcomeRecorder) ObserveLimit(string, int64, int64)      {}

// TestNoClientKeyInAttributes: whatever the clients' keys, the series are
// one per policy and outcome: no attribute takes a key's value.
func TestNoClientKeyInAttributes(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("per-user", 1, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	for i := range 50 {
		u := fmt.Sprintf("user-%d", i)
		get(h, "/", "X-User", u)
		get(h, "/", "X-User", u)
	}
	points, _ := collect(t, reader)
	for k := range points {
		if strings.Contains(k, "user-") {
			t.Errorf("series %s holds a client key", k)
		}
	}
	wantLines(t, "collected", nonzero(points, "ratekeeper.requests"),
		"ratekeeper.requests{outcome=allowed,policy=per-user} 50",
		"ratekeeper.requests{outcome=denied,policy=per-user} 50",
	)
}

// collectRaw returns a collection of reader.
func collectRaw(t *testing.T, reader *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// histPoints returns the data points of a float64 histogram.
func histPoints(m metricdata.Metrics) []metricdata.HistogramDataPoint[float64] {
	if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
		return h.DataPoints
	}
	return nil
}
