package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLimitsAfterSetLimitAndRemoval: the limit gauges report every
// policy from the first collection, follow SetLimit, and stop for a
// policy a reload (SetPolicies) removed, while the kept policy's gauges
// and the removed policy's counters stay. A policy added back is reported
// again.
func TestLimitsAfterSetLimitAndRemoval(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("old", 3, user), fixed("kept", 5, user)},
		middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	get(h, "/", "X-User", "ann")
	points, _ := collect(t, reader)
	wantLines(t, "at start", only(points, "ratekeeper.configured")+"\n"+only(points, "ratekeeper.effective"),
		"ratekeeper.configured_limit{policy=kept} 5",
		"ratekeeper.configured_limit{policy=old} 3",
		"ratekeeper.effective_limit{policy=kept} 5",
		"ratekeeper.effective_limit{policy=old} 3",
	)

	if err := m.SetLimit("old", 1); err != nil {
		t.Fatal(err)
	}
	points, _ = collect(t, reader)
	wantLines(t, "after SetLimit(old, 1)", only(points, "ratekeeper.effective"),
		"ratekeeper.effective_limit{policy=kept} 5",
		"ratekeeper.effective_limit{policy=old} 1",
	)

	if err := m.SetPolicies([]*policy.Policy{m.Configured("kept")}); err != nil {
		t.Fatal(err)
	}
	get(h, "/", "X-User", "ann")
	points, _ = collect(t, reader)
	wantLines(t, "after old was removed", only(points, "ratekeeper.configured")+"\n"+only(points, "ratekeeper.effective"),
		"ratekeeper.configured_limit{policy=kept} 5",
		"ratekeeper.effective_limit{policy=kept} 5",
	)
	wantLines(t, "counters after old was removed", nonzero(points, "ratekeeper.requests"),
		"ratekeeper.requests{outcome=allowed,policy=kept} 2",
		"ratekeeper.requests{outcome=allowed,policy=old} 1",
	)

	if err := m.SetPolicies([]*policy.Policy{m.Configured("kept"), fixed("old", 7, user)}); err != nil {
		t.Fatal(err)
	}
	get(h, "/", "X-User", "bob")
	points, _ = collect(t, reader)
	wantLines(t, "after old came back", only(points, "ratekeeper.effective"),
		"ratekeeper.effective_limit{policy=kept} 5",
		"ratekeeper.effective_limit{policy=old} 7",
	)
	if got, want := only(points, "ratekeeper.requests{outcome=allowed,policy=old}"), "ratekeeper.requests{outcome=allowed,policy=old} 2"; got != want {
		t.Errorf("old's counter after it came back: %s, want %s", got, want)
	}
}

// TestClose: after Close the gauges (limits, failure state) are no longer
// reported; the counters are. Close twice is fine.
func TestClose(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 3, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	if err := obs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := obs.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if code := get(router(m), "/", "X-User", "ann"); code != http.StatusOK {
		t.Fatal(code)
	}
	points, _ := collect(t, reader)
	if got, want := nonzero(points, "ratekeeper."), "ratekeeper.requests{outcome=allowed,policy=p} 1"; got != want {
		t.Errorf("after Close:\n%s\nwant\n%s", got, want)
	}
}

// TestGivenBackCounted: the requests whose units went back to the store
// because their response did not count (policy.CountIf) are counted per
// policy in ratekeeper.given_back, as Stats().GivenBack counts them: a
// login policy counting only failures gives back every success, the
// per-user policy beside it none.
func TestGivenBackCounted(t *testing.T) {
	obs, reader := newObserver(t)
	login := policy.Must(policy.New("login", fixed("x", 5, user).Spec(), user, policy.CountIf(policy.CountFailed)))
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("per-user", 100, user), login}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	status := http.StatusOK
	mux := http.NewServeMux()
	mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })))
	post := func() {
		r, _ := http.NewRequest("POST", "/login", nil)
		r.Header.Set("X-User", "ann")
		mux.ServeHTTP(httptest.NewRecorder(), r)
	}
	for range 3 {
		post()
	}
	status = http.StatusUnauthorized
	for range 2 {
		post()
	}
	if got := m.Stats().GivenBack; got != 3 {
		t.Fatalf("Stats().GivenBack = %d, want 3", got)
	}
	points, _ := collect(t, reader)
	if got, want := only(points, "ratekeeper.given_back"), "ratekeeper.given_back{policy=login} 3"; got != want {
		t.Errorf("given back:\n%s\nwant\n%s", got, want)
	}
}

// TestLimitsUnderCardinalityLimitStable: under an SDK cardinality limit
// smaller than the number of policies, the limit gauges keep the same
// policies' series at every collection, the first by name (the others
// fall into the SDK's overflow series), since the callback observes the
// policies in the order of their names. It observed them in the order of
// a map before, so that a policy's gauge came and went between
// collections, and this test failed at nearly every run.
func TestLimitsUnderCardinalityLimitStable(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithCardinalityLimit(3))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	obs, err := otelmetrics.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"e", "b", "f", "a", "d", "c"} {
		obs.ObserveLimit(name, int64(i+1), 10)
	}
	for i := range 10 {
		points, _ := collect(t, reader)
		wantLines(t, fmt.Sprintf("collection %d", i+1), only(points, "ratekeeper.effective"),
			"ratekeeper.effective_limit{otel.metric.overflow=true} 3",
			"ratekeeper.effective_limit{policy=a} 4",
			"ratekeeper.effective_limit{policy=b} 2",
		)
	}
}

// TestRenamedPoliciesFillTheCardinalityLimit: the counters of a policy a
// reload removed stay (cumulative temporality), and count against the
// SDK's cardinality limit of each instrument (sdkmetric's default: 2000
// series, some 500 policy names of ratekeeper.requests' four outcomes),
// as the package doc says: once reloads renaming the policy have used it
// up, the requests of the policy in force are counted in the overflow
// series, not under its name. Here the limit is 9 series: two names'
// four outcomes, and the overflow.
func TestRenamedPoliciesFillTheCardinalityLimit(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithCardinalityLimit(9))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	obs, err := otelmetrics.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("api-v1", 100, remote)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	for _, name := range []string{"api-v2", "api-v3"} {
		get(h, "/")
		if err := m.SetPolicies([]*policy.Policy{fixed(name, 100, remote)}); err != nil {
			t.Fatal(err)
		}
	}
	get(h, "/")
	points, _ := collect(t, reader)
	wantLines(t, "after two renames", nonzero(points, "ratekeeper.requests"),
		"ratekeeper.requests{otel.metric.overflow=true} 1",
		"ratekeeper.requests{outcome=allowed,policy=api-v1} 1",
		"ratekeeper.requests{outcome=allowed,policy=api-v2} 1",
	)
	wantLines(t, "limits", only(points, "ratekeeper.effective"), "ratekeeper.effective_limit{policy=api-v3} 100")
}
