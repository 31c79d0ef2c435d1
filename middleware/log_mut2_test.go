package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLogOptionRefusals: each LogOption's refusal, exactly, and the
// partition-key secret's bound on both sides of its edge.
func TestLogOptionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  middleware.LogOption
		want string // "" when taken
	}{
		{"nil clock", middleware.LogClock(nil), "middleware: LogClock: clock is nil"},
		{"nil option", nil, "middleware: NewLogObserver: Options hold a nil LogOption at index 0"},
		{"15-byte secret", middleware.LogPartitionKey(make([]byte, 15)), "middleware: LogPartitionKey: secret must be at least 16 bytes"},
		{"16-byte secret", middleware.LogPartitionKey(make([]byte, 16)), ""},
	} {
		lo, err := middleware.NewLogObserver(nil, tc.opt)
		switch {
		case tc.want == "" && (lo == nil || err != nil):
			t.Errorf("%s: NewLogObserver = %v, %v; want it taken", tc.name, lo, err)
		case tc.want != "" && (lo != nil || err == nil || err.Error() != tc.want):
			t.Errorf("%s: NewLogObserver = %v, %v; want nil, %q", tc.name, lo, err, tc.want)
		}
	}
}

// loggedPolicies returns a middleware over policies (in shadow mode when
// shadow is set), on a store and a LogObserver (writing to lh, opts added)
// that share a clock standing at the start of a minute.
func loggedPolicies(t *testing.T, lh slog.Handler, policies []*policy.Policy, shadow bool, opts ...middleware.LogOption) (*middleware.Middleware, *algotest.Clock) {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	lo, err := middleware.NewLogObserver(slog.New(lh), append(opts, middleware.LogClock(clock))...)
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	mopts := []middleware.Option{middleware.WithObserver(lo)}
	if shadow {
		mopts = append(mopts, middleware.WithShadow(nil))
	}
	return middleware.MustNew(store, policies, mopts...), clock
}

// TestLogDefaultRateIsTenPerSecond: by default a policy's denials are
// logged ten in a second; the next second's first record counts those
// suppressed.
func TestLogDefaultRateIsTenPerSecond(t *testing.T) {
	var buf bytes.Buffer
	m, clock := loggedPolicies(t, slog.NewJSONHandler(&buf, nil), []*policy.Policy{fixed("p", 1, time.Hour, user)}, false)
	h := m.Handler(ok)
	for range 13 { // one allowed, twelve denied
		serve(h, "GET", "/", "X-User", "ann")
	}
	if recs := logRecords(t, &buf, "ratekeeper: request denied"); len(recs) != 10 {
		t.Fatalf("%d denial records in one second, want 10", len(recs))
	}
	buf.Reset()
	clock.Advance(time.Second)
	serve(h, "GET", "/", "X-User", "ann")
	recs := logRecords(t, &buf, "ratekeeper: request denied")
	if len(recs) != 1 || recs[0]["suppressed"] != float64(2) {
		t.Errorf("next second: records %v, want one with suppressed 2", recs)
	}
}

// TestLogDenialNamesPolicy: a denial record names the first policy that
// denied, and is a denial record in shadow mode too (shadow true); a cost
// beyond a policy's capacity is a denial by that policy, not a store
// failure.
func TestLogDenialNamesPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policies []*policy.Policy
		shadow   bool
		requests int
		want     string
	}{
		{"both deny", []*policy.Policy{fixed("first", 1, time.Hour, user), fixed("second", 1, time.Hour, user)}, false, 2, "first"},
		{"shadow", []*policy.Policy{fixed("p", 1, time.Hour, user)}, true, 2, "p"},
		{"cost", []*policy.Policy{fixed("costly", 2, time.Hour, user, policy.WithCost(func(*http.Request) int64 { return 3 }))}, false, 1, "costly"},
	} {
		var buf bytes.Buffer
		m, _ := loggedPolicies(t, slog.NewJSONHandler(&buf, nil), tc.policies, tc.shadow)
		h := m.Handler(ok)
		for range tc.requests {
			serve(h, "GET", "/", "X-User", "ann")
		}
		recs := logRecords(t, &buf, "ratekeeper: request denied")
		if len(recs) != 1 || recs[0]["policy"] != tc.want || recs[0]["shadow"] != tc.shadow {
			t.Errorf("%s: denial records %v, want one naming %q, shadow %v", tc.name, recs, tc.want, tc.shadow)
		}
		if others := strings.Count(buf.String(), "\n") - len(recs); others != 0 {
			t.Errorf("%s: %d other records: %s", tc.name, others, buf.String())
		}
	}
}

// TestLogSamplingForgetsRemovedPolicy: a policy that leaves the rule set
// and comes back starts a new second's budget of records.
func TestLogSamplingForgetsRemovedPolicy(t *testing.T) {
	var buf bytes.Buffer
	p := fixed("p", 1, time.Hour, user)
	m, _ := loggedPolicies(t, slog.NewJSONHandler(&buf, nil), []*policy.Policy{p}, false, middleware.LogRate(1))
	h := m.Handler(ok)
	for range 3 { // allowed, denied (logged), denied (suppressed)
		serve(h, "GET", "/", "X-User", "ann")
	}
	for _, ps := range [][]*policy.Policy{{fixed("q", 1, time.Hour, user)}, {p}} {
		if err := m.SetPolicies(ps); err != nil {
			t.Fatal(err)
		}
	}
	serve(h, "GET", "/", "X-User", "ann")
	recs := logRecords(t, &buf, "ratekeeper: request denied")
	if len(recs) != 2 || recs[1]["suppressed"] != float64(0) {
		t.Errorf("denial records %v, want two, the second (after p came back) suppressing none", recs)
	}
}

// TestLogStateLevels: a change to a failure state is logged at Warn, the
// return to healthy at Info.
func TestLogStateLevels(t *testing.T) {
	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lo.ObserveState(middleware.StateHealthy, middleware.StateFailingClosed)
	lo.ObserveState(middleware.StateFailingClosed, middleware.StateHealthy)
	recs := logRecords(t, &buf, "ratekeeper: failure state changed")
	if len(recs) != 2 || recs[0]["level"] != "WARN" || recs[0]["to"] != "closed" || recs[1]["level"] != "INFO" || recs[1]["to"] != "healthy" {
		t.Errorf("records %v, want closed at WARN, then healthy at INFO", recs)
	}
}

// TestOutcomeAndStateNamesPastTheEnd: a value past the last name is
// written with its number, not an index out of range.
func TestOutcomeAndStateNamesPastTheEnd(t *testing.T) {
	if got := middleware.Outcome(7).String(); got != "Outcome(7)" {
		t.Errorf("Outcome(7) = %q, want \"Outcome(7)\"", got)
	}
	if got := middleware.State(4).String(); got != "State(4)" {
		t.Errorf("State(4) = %q, want \"State(4)\"", got)
	}
}

// defaultLogTo makes slog.Default write JSON records to the buffer it
// returns until the test ends. The buffer is locked: slog.Default is the
// whole process's, and a goroutine another test left running may log on
// it while the test reads.
func defaultLogTo(t *testing.T) *lockedBuffer {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	buf := new(lockedBuffer)
	slog.SetDefault(slog.New(slog.NewJSONHandler(buf, nil)))
	return buf
}

// TestLogNilLoggerIsDefault: NewLogObserver(nil) logs to slog.Default as
// it is when it is called.
func TestLogNilLoggerIsDefault(t *testing.T) {
	buf := defaultLogTo(t)
	lo, err := middleware.NewLogObserver(nil)
	if err != nil {
		t.Fatal(err)
	}
	lo.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
	if recs := logRecords(t, buf, "ratekeeper: failure state changed"); len(recs) != 1 {
		t.Errorf("records %v, want the state change on slog.Default", recs)
	}
}

// TestEventRouteWithoutRequest: an Event without a request (as an
// observer's own tests build one) has no route, and asking is no panic.
func TestEventRouteWithoutRequest(t *testing.T) {
	if got := (middleware.Event{}).Route(); got != "" {
		t.Errorf("Event{}.Route() = %q, want \"\"", got)
	}
}
