package metricset_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
	"github.com/ratekeeper/ratekeeper/middleware/internal/resultfields"
	"github.com/ratekeeper/ratekeeper/policy"
)

var rule = metricset.BucketRule{Prefix: "pkg", Invalid: func(b float64) string {
	if math.IsNaN(b) {
		return "a bucket is NaN"
	}
	return ""
}}

// TestBucketRuleCheck: no buckets, a bound Invalid rejects, and bounds
// that do not increase are errors carrying the prefix and where; a bound
// Invalid accepts (an infinity here) is not.
func TestBucketRuleCheck(t *testing.T) {
	for _, tc := range []struct {
		buckets []float64
		want    string
	}{
		{nil, "pkg: Where: no buckets"},
		{[]float64{}, "pkg: Where: no buckets"},
		{[]float64{1, math.NaN()}, "pkg: Where: a bucket is NaN"},
		{[]float64{1, 1}, "pkg: Where: buckets must increase: 1 after 1"},
		{[]float64{1, 2, 0.5}, "pkg: Where: buckets must increase: 0.5 after 2"},
		{[]float64{0.1, 1, math.Inf(1)}, ""},
	} {
		err := rule.Check("Where", tc.buckets)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("Check(%v) = %v, want %q", tc.buckets, err, tc.want)
		}
	}
}

// TestBucketRuleGivenAndResolve: Given checks as the option it is given
// ("WithBuckets") and sets a copy; Resolve keeps buckets set, else checks
// defaults as the name it is given ("DefaultBuckets") and sets a copy of
// them.
func TestBucketRuleGivenAndResolve(t *testing.T) {
	var got []float64
	if err := rule.Given("WithBuckets", &got, nil); fmt.Sprint(err) != "pkg: WithBuckets: no buckets" || got != nil {
		t.Errorf("Given(nil): %v, set %v", err, got)
	}
	in := []float64{1, 2}
	if err := rule.Given("WithBuckets", &got, in); err != nil || !slices.Equal(got, []float64{1, 2}) {
		t.Fatalf("Given(%v): %v, set %v", in, err, got)
	}
	in[0] = 0
	if got[0] != 1 {
		t.Errorf("Given kept its argument: %v", got)
	}

	defaults := []float64{3, 4}
	set := got
	if err := rule.Resolve("DefaultBuckets", &set, defaults); err != nil || &set[0] != &got[0] {
		t.Errorf("Resolve(given, defaults): %v, set %v: want given itself", err, set)
	}
	set = nil
	if err := rule.Resolve("DefaultBuckets", &set, defaults); err != nil || !slices.Equal(set, []float64{3, 4}) {
		t.Fatalf("Resolve(nil, defaults): %v, set %v", err, set)
	}
	defaults[0] = 0
	if set[0] != 3 {
		t.Errorf("Resolve kept defaults itself: %v", set)
	}
	set = nil
	if err := rule.Resolve("DefaultBuckets", &set, []float64{2, 1}); fmt.Sprint(err) != "pkg: DefaultBuckets: buckets must increase: 1 after 2" || set != nil {
		t.Errorf("Resolve(nil, [2 1]): %v, set %v", err, set)
	}
}

// TestDefaultBuckets: from 1µs (a decision on the memory store takes one
// or two: with 10µs first, nearly all fell in the first bucket, and
// histogram_quantile's p50 and p90 were artefacts of interpolation) to 1s,
// increasing, a new slice each call.
func TestDefaultBuckets(t *testing.T) {
	a, b := metricset.DefaultBuckets(), metricset.DefaultBuckets()
	if len(a) != 19 || a[0] != 1e-6 || a[1] != 2.5e-6 || a[2] != 5e-6 || a[3] != 10e-6 || a[len(a)-1] != 1 {
		t.Errorf("DefaultBuckets() = %v", a)
	}
	if err := rule.Check("DefaultBuckets", a); err != nil {
		t.Error(err)
	}
	a[0] = 5
	if b[0] != 1e-6 {
		t.Errorf("two calls share their slice")
	}
}

// TestSeries: the label values and which counter each series belongs to.
func TestSeries(t *testing.T) {
	var got []string
	for s := range metricset.Series(metricset.NumSeries) {
		got = append(got, fmt.Sprintf("%s:%v", s.Label(), s.IsError()))
	}
	want := "allowed:false denied:false shadow_denied:false abandoned:false store:true key:true cost:true"
	if strings.Join(got, " ") != want {
		t.Errorf("series %v, want %s", got, want)
	}
}

// tally is a value per policy counting its series.
type tally struct {
	name string
	n    [metricset.NumSeries]int
}

func newTallies() *metricset.Policies[*tally] {
	return metricset.NewPolicies(func(name string) *tally { return &tally{name: name} })
}

// counted returns the series counted, "policy/label n", sorted.
func counted(ps *metricset.Policies[*tally], names ...string) string {
	var out []string
	for _, name := range names {
		c := ps.Get(name)
		for s, n := range c.n {
			if n != 0 {
				out = append(out, fmt.Sprintf("%s/%s %d", name, metricset.Series(s).Label(), n))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

var user keyfunc.Func = func(r *http.Request) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", keyfunc.ErrNoUser
}

func fixed(name string, limit int64) *policy.Policy {
	return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}, user))
}

// newResults returns a request of user ann and a function making Results
// of policies for it as the middleware makes them: prepared, then taken
// by a memory store when err is nil, else not taken, with Err err.
func newResults(t *testing.T, policies ...*policy.Policy) (*http.Request, func(err error) *middleware.Result) {
	t.Helper()
	set, err := policy.NewSet(policies)
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	return r, func(err error) *middleware.Result {
		t.Helper()
		res := failedResult(err)
		pr, _, _ := fields(res)
		if err := set.Prepare(r, set.Match(r), pr); err != nil {
			t.Fatal(err)
		}
		if err == nil {
			if err := pr.Take(context.Background(), store); err != nil {
				t.Fatal(err)
			}
		}
		return res
	}
}

// fields writes the Results these tests make, which are read-only to
// others (see package resultfields).
var fields = resultfields.Of[*middleware.Result]()

// failedResult returns a Result with no policies and Err err, as the
// middleware makes one for a request it refused before its store call
// (a *policy.KeyError, a *policy.CostError).
func failedResult(err error) *middleware.Result {
	res := new(middleware.Result)
	setFailure(res, false, err)
	return res
}

// setFailure sets the Fallback and Err of res.
func setFailure(res *middleware.Result, fallback bool, err error) {
	_, fb, e := fields(res)
	*fb, *e = fallback, err
}

// TestCount: each kind of Event counts the series of prommetrics and
// otelmetrics under the policies it should, and only those. The Results
// are made as the middleware makes them: Prepare, then Take on a memory
// store.
func TestCount(t *testing.T) {
	tight, loose := fixed("tight", 1), fixed("loose", 10)
	_, result := newResults(t, tight, loose)
	// The first Result taken is allowed by both, the later ones denied by
	// tight.
	allowed := result(nil)
	denied := result(nil)
	if !denied.Taken() || denied.Decision(0).Allowed == denied.Decision(1).Allowed {
		t.Fatalf("second Result: not denied by one policy of two")
	}
	fallback := result(nil)
	setFailure(fallback, true, nil)
	storeDown := errors.New("redis: down")
	for _, tc := range []struct {
		name string
		e    middleware.Event
		want string
	}{
		{"allowed", middleware.Event{Result: allowed, Outcome: middleware.Allowed}, "loose/allowed 1, tight/allowed 1"},
		{"denied by one", middleware.Event{Result: denied, Outcome: middleware.Denied}, "tight/denied 1"},
		{"shadow denied by one", middleware.Event{Result: denied, Outcome: middleware.ShadowDenied}, "tight/shadow_denied 1"},
		{"no key", middleware.Event{Result: failedResult(&policy.KeyError{Policy: tight, Err: keyfunc.ErrNoUser}), Outcome: middleware.KeyRejected}, "tight/key 1"},
		{"no key, shadowed", middleware.Event{Result: failedResult(&policy.KeyError{Policy: loose, Err: keyfunc.ErrNoUser}), Outcome: middleware.ShadowDenied}, "loose/key 1"},
		{"cost out of range", middleware.Event{Result: failedResult(fmt.Errorf("wrapped: %w", &policy.CostError{Policy: loose, Cost: 99})), Outcome: middleware.Denied}, "loose/cost 1"},
		{"store failed open", middleware.Event{Result: result(storeDown), Outcome: middleware.FailedOpen}, "loose/store 1, tight/store 1"},
		{"store failed closed", middleware.Event{Result: result(storeDown), Outcome: middleware.FailedClosed}, "loose/store 1, tight/store 1"},
		{"store failed, shadowed", middleware.Event{Result: result(storeDown), Outcome: middleware.ShadowDenied}, "loose/store 1, tight/store 1"},
		{"fallback store", middleware.Event{Result: fallback, Outcome: middleware.Allowed}, "loose/allowed 1, loose/store 1, tight/allowed 1, tight/store 1"},
		{"abandoned", middleware.Event{Result: result(context.Canceled), Outcome: middleware.Abandoned}, "loose/abandoned 1, tight/abandoned 1"},
		{"abandoned once admitted", middleware.Event{Result: allowed, Outcome: middleware.Abandoned}, "loose/abandoned 1, tight/abandoned 1"},
	} {
		ps := newTallies()
		ps.Count(tc.e, func(c *tally, s metricset.Series) { c.n[s]++ })
		if got := counted(ps, "tight", "loose"); got != tc.want {
			t.Errorf("%s: counted %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCountAllocatesNothing: once its policies are cached, counting an
// admitted request allocates nothing, even with an add that captures
// variables of its caller (as otelmetrics' captures the request's
// context).
func TestCountAllocatesNothing(t *testing.T) {
	r, result := newResults(t, fixed("a", 1_000_000), fixed("b", 1_000_000))
	res := result(nil)
	e := middleware.Event{Request: r, Result: res, Outcome: middleware.Allowed}
	ps := newTallies()
	ctx := r.Context()
	var seen int
	add := func(c *tally, s metricset.Series) {
		if ctx != nil {
			c.n[s]++
			seen++
		}
	}
	ps.Count(e, add) // caches a and b
	if n := testing.AllocsPerRun(100, func() { ps.Count(e, add) }); n != 0 {
		t.Errorf("Count: %v allocations, want 0", n)
	}
	if seen < 2*101 {
		t.Errorf("add called %d times, want at least %d", seen, 2*101)
	}
}

// TestPolicies: Get builds a policy's value once, also under concurrent
// first calls; SetLimits builds it too and AppendLimits lists the limits;
// RemoveLimits of the name's only owner forgets both, and a later Get
// builds a new value.
func TestPolicies(t *testing.T) {
	var mu sync.Mutex
	built := map[string]int{}
	ps := metricset.NewPolicies(func(name string) *tally {
		mu.Lock()
		built[name]++
		mu.Unlock()
		return &tally{name: name}
	})
	var wg sync.WaitGroup
	got := make([]*tally, 8)
	for i := range got {
		wg.Go(func() { got[i] = ps.Get(fmt.Sprint("p", i%2)) })
	}
	wg.Wait()
	if built["p0"] != 1 || built["p1"] != 1 {
		t.Errorf("built %v, want each once", built)
	}
	for i, c := range got {
		if c != ps.Get(fmt.Sprint("p", i%2)) {
			t.Errorf("Get %d returned another value", i)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ps.Get("p0") }); n != 0 {
		t.Errorf("Get of a cached policy: %v allocations", n)
	}

	limits := func() string {
		var out []string
		for _, l := range ps.AppendLimits(nil) {
			out = append(out, fmt.Sprintf("%s %d/%d", l.Policy.name, l.Limit, l.Configured))
		}
		sort.Strings(out)
		return strings.Join(out, ", ")
	}
	if got := limits(); got != "" {
		t.Errorf("limits before SetLimits: %q", got)
	}
	var o metricset.Owner
	ps.SetLimits(&o, "p0", 3, 5, nil)
	ps.SetLimits(&o, "p2", 7, 7, nil)
	ps.SetLimits(&o, "p0", 4, 5, nil)
	if got, want := limits(), "p0 4/5, p2 7/7"; got != want {
		t.Errorf("limits %q, want %q", got, want)
	}
	if built["p2"] != 1 || ps.Get("p0") != got[0] {
		t.Errorf("SetLimits: built %v; p0's value replaced: %v", built, ps.Get("p0") != got[0])
	}

	p0 := ps.Get("p0")
	ps.RemoveLimits(&o, "p0", nil)
	ps.RemoveLimits(&o, "never", nil)
	if got, want := limits(), "p2 7/7"; got != want {
		t.Errorf("limits after RemoveLimits(p0) %q, want %q", got, want)
	}
	if ps.Get("p0") == p0 || built["p0"] != 2 {
		t.Errorf("Get after RemoveLimits: the old value, or built %d times, want 2", built["p0"])
	}
	if ps.Get("p1") != got[1] {
		t.Errorf("RemoveLimits(p0) dropped p1")
	}
}

// TestAppendLimitsByName: AppendLimits lists the policies in the order
// of their names, whatever the order they were set in, at every call: an
// SDK that keeps a bounded number of series per instrument (an
// OpenTelemetry cardinality limit) then keeps the same policies' gauges at
// each collection. In the order of the map it listed them before, and this
// test failed at nearly every run.
func TestAppendLimitsByName(t *testing.T) {
	ps := newTallies()
	names := []string{"p5", "p2", "p7", "p0", "p3", "p6", "p1", "p4", "p9", "p8"}
	var o metricset.Owner
	for i, name := range names {
		ps.SetLimits(&o, name, int64(i+1), 10, nil)
	}
	want := slices.Sorted(slices.Values(names))
	for i := range 20 {
		var got []string
		for _, l := range ps.AppendLimits(nil) {
			got = append(got, l.Policy.name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("call %d: AppendLimits listed %v, want %v", i+1, got, want)
		}
	}
	// Appended after what dst holds.
	got := ps.AppendLimits([]metricset.Limits[*tally]{{Limit: -1}})
	if len(got) != 11 || got[0].Limit != -1 || got[1].Policy.name != "p0" || got[10].Policy.name != "p9" {
		t.Errorf("AppendLimits(dst) did not append after dst, by name: %d entries", len(got))
	}
}

// TestStates: the gauges' values follow the transitions of one
// middleware, of two middlewares (one failing is not healthy), and of
// transitions reported out of order; report sees each Transition's
// values.
func TestStates(t *testing.T) {
	const (
		h      = middleware.StateHealthy
		open   = middleware.StateFailingOpen
		closed = middleware.StateFailingClosed
		fb     = middleware.StateFallback
	)
	str := func(v metricset.StateValues) string {
		var out []string
		for _, s := range middleware.States {
			if v[s] != 0 {
				out = append(out, s.String())
			}
		}
		return strings.Join(out, ",")
	}
	var st metricset.States
	if got := str(st.Values()); got != "healthy" {
		t.Errorf("zero States: %s", got)
	}
	var reported []string
	report := func(v metricset.StateValues) { reported = append(reported, str(v)) }
	// Middleware A fails open and recovers; B fails closed, then moves to
	// fallback and recovers, its last two transitions reported in the
	// reverse order.
	for _, tr := range [][2]middleware.State{
		{h, open},                  // A
		{h, closed},                // B
		{open, h},                  // A
		{fb, h},                    // B's last, reported early: fallback at -1
		{closed, fb},               // B's second, reported late
		{h, middleware.State(200)}, // beyond States: ignored
	} {
		st.Transition(tr[0], tr[1], report)
	}
	if got, want := strings.Join(reported, " "), "open open,closed closed closed healthy healthy"; got != want {
		t.Errorf("reported %q, want %q", got, want)
	}
	if got := str(st.Values()); got != "healthy" {
		t.Errorf("Values after: %s", got)
	}
	if n := testing.AllocsPerRun(100, func() {
		st.Transition(h, open, nil)
		st.Transition(open, h, nil)
	}); n != 0 {
		t.Errorf("Transition: %v allocations", n)
	}
}
