package middleware_test

import (
	"bytes"
	"encoding/json"
	"errors"
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

func mustConfig(t *testing.T, yaml string) *policy.Config {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestFromConfig(t *testing.T) {
	const policies = "policies:\n  - {name: per-ip, limit: 1, window: 1m}\n"
	for _, tc := range []struct {
		name, yaml string
		check      func(t *testing.T, h http.Handler)
	}{
		{"defaults", policies, func(t *testing.T, h http.Handler) {
			if w := serve(h, "GET", "/"); w.Header().Get("RateLimit") == "" || w.Code != 200 {
				t.Errorf("%d, RateLimit %q, want 200 with IETF headers", w.Code, w.Header().Get("RateLimit"))
			}
		}},
		{"draft-6 closed", "headers: draft-6\nfailure_mode: closed\nfailure_retry_after: 3s\n" + policies, func(t *testing.T, h http.Handler) {
			w := serve(h, "GET", "/")
			if w.Code != 503 || w.Header().Get("Retry-After") != "3" {
				t.Errorf("failing store: %d Retry-After %q, want 503 and 3", w.Code, w.Header().Get("Retry-After"))
			}
		}},
		{"legacy fallback", "headers: legacy\nfailure_mode: fallback\n" + policies, func(t *testing.T, h http.Handler) {
			w := serve(h, "GET", "/")
			if w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != "1" {
				t.Errorf("first: %d X-RateLimit-Limit %q, want 200 and 1 from the fallback", w.Code, w.Header().Get("X-RateLimit-Limit"))
			}
			if w := serve(h, "GET", "/"); w.Code != 429 {
				t.Errorf("second: %d, want 429 from the in-memory fallback", w.Code)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustConfig(t, tc.yaml)
			var store algorithms.Store = &failing{}
			if tc.name == "defaults" {
				store, _ = newStore(t)
			}
			m, err := middleware.FromConfig(store, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, m.Handler(ok))
		})
	}
	if _, err := middleware.FromConfig(&failing{}, nil); err == nil {
		t.Error("FromConfig(nil config) = nil error")
	}
	bad := mustConfig(t, policies)
	bad.Headers = "draft-99"
	if _, err := middleware.ConfigOptions(bad, nil); err == nil || !strings.Contains(err.Error(), "headers") {
		t.Errorf("ConfigOptions(headers draft-99) = %v, want an error naming headers", err)
	}
	bad.Headers, bad.FailureMode = "", "sideways"
	if _, err := middleware.ConfigOptions(bad, nil); err == nil || !strings.Contains(err.Error(), "failure_mode") {
		t.Errorf("ConfigOptions(failure_mode sideways) = %v, want an error naming failure_mode", err)
	}
}

func TestApplyConfig(t *testing.T) {
	store, _ := newStore(t)
	m, err := middleware.FromConfig(store, mustConfig(t, "policies:\n  - {name: a, limit: 1, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyConfig(mustConfig(t, "policies:\n  - {name: b, limit: 5, window: 1m}\n")); err != nil {
		t.Fatal(err)
	}
	if got := m.Set().Policies()[0].Name(); got != "b" {
		t.Errorf("after ApplyConfig: policy %s, want b", got)
	}
	err = m.ApplyConfig(mustConfig(t, "headers: legacy\nfailure_mode: closed\npolicies:\n  - {name: c, limit: 5, window: 1m}\n"))
	if !errors.Is(err, middleware.ErrRestartNeeded) || !strings.Contains(err.Error(), "headers") || !strings.Contains(err.Error(), "failure_mode") {
		t.Errorf("ApplyConfig(new headers and mode) = %v, want ErrRestartNeeded naming both", err)
	}
	if got := m.Set().Policies()[0].Name(); got != "c" {
		t.Errorf("policies not applied along with the restart warning: %s", got)
	}
	if err := m.ApplyConfig(nil); err == nil {
		t.Error("ApplyConfig(nil) = nil")
	}

	// Removing a setting goes back to its default: a change too.
	m, err = middleware.FromConfig(store, mustConfig(t, "headers: legacy\npolicies:\n  - {name: a, limit: 1, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = m.ApplyConfig(mustConfig(t, "policies:\n  - {name: a, limit: 1, window: 1m}\n"))
	if !errors.Is(err, middleware.ErrRestartNeeded) || !strings.Contains(err.Error(), "headers") {
		t.Errorf("ApplyConfig(headers removed, legacy in force) = %v, want ErrRestartNeeded naming headers", err)
	}
}

func TestLogObserverSamples(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	clock := algotest.NewClock(t0)
	lo, err := middleware.NewLogObserver(logger, middleware.LogRate(3), middleware.LogClock(clock), middleware.LogRawKeys())
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("login", 1, time.Hour, remote), fixed("other", 1, time.Hour, user, policy.WithRoutes("/nothing"))},
		middleware.WithObserver(lo))
	h := m.Handler(ok)
	for range 101 { // 1 allowed, 100 denied in one second
		serve(h, "POST", "/login")
	}
	clock.Advance(time.Second)
	serve(h, "POST", "/login")
	m.SetLimit("login", 2)
	m.SetLimit("login", 0)

	var denied []map[string]any
	var limits []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["msg"] {
		case "ratekeeper: request denied":
			denied = append(denied, rec)
		case "ratekeeper: effective limit":
			limits = append(limits, rec["policy"].(string)+"="+jsonNum(rec["limit"]))
		}
	}
	if len(denied) != 4 {
		t.Fatalf("%d denial records, want 3 in the first second and 1 in the next:\n%s", len(denied), buf.String())
	}
	for i, want := range []float64{0, 0, 0, 97} {
		if got := denied[i]["suppressed"]; got != want || denied[i]["policy"] != "login" || denied[i]["key"] != "login:192.0.2.1:1234" {
			t.Errorf("record %d: policy %v key %v suppressed %v, want login, login:192.0.2.1:1234, %v", i, denied[i]["policy"], denied[i]["key"], got, want)
		}
	}
	if got, want := strings.Join(limits, " "), "login=2 login=1"; got != want {
		t.Errorf("limit records %q, want %q (none at construction)", got, want)
	}
	if _, err := middleware.NewLogObserver(nil, middleware.LogRate(0)); err == nil {
		t.Error("LogRate(0) accepted")
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestApplyConfigOptionsOverride: a middleware built by FromConfig with an
// option overriding the file's header profile or failure mode (which its
// doc offers: "opts come after the configuration's options, so they win")
// is not told on every reload of an unchanged file that a restart is
// needed; it was, since ApplyConfig compared the file's settings with the
// options in force instead of with the file's settings it was built from.
// A file that does change them still needs a restart.
func TestApplyConfigOptionsOverride(t *testing.T) {
	const policies = "policies:\n  - {name: a, limit: 1, window: 1m}\n"
	store, _ := newStore(t)
	for _, tc := range []struct {
		name, yaml string
		opt        middleware.Option
		changed    string // a file changing what the option overrides
	}{
		{"headers", policies, middleware.WithHeaders(middleware.Draft6), "headers: legacy\n" + policies},
		{"fallback store", "failure_mode: fallback\n" + policies, middleware.OnStoreError(middleware.FallBack(store)), "failure_mode: open\n" + policies},
		{"failure mode", policies, middleware.OnStoreError(middleware.FailClosed(time.Second)), "failure_mode: closed\n" + policies},
		{"retry after", "failure_mode: closed\n" + policies, middleware.OnStoreError(middleware.FailClosed(9 * time.Second)), "failure_mode: closed\nfailure_retry_after: 2s\n" + policies},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := middleware.FromConfig(store, mustConfig(t, tc.yaml), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if err := m.ApplyConfig(mustConfig(t, tc.yaml)); err != nil {
					t.Errorf("reload %d of the unchanged file: %v, want nil", i+1, err)
				}
			}
			if err := m.ApplyConfig(mustConfig(t, tc.changed)); !errors.Is(err, middleware.ErrRestartNeeded) {
				t.Errorf("reload of a file changing the setting: %v, want ErrRestartNeeded", err)
			}
		})
	}
}

// TestApplyConfigToNewLeavesUnstatedSettings: a middleware built with New
// and its own options (draft-6 headers, FailClosed) that reloads a file
// of policies alone was told, at every reload, that the file changed its
// headers and failure mode and needed a restart (the loaded file's
// defaults, ietf and open, compared with the options), which policy/reload
// logs as a warning each time. A file changes only what it states.
func TestApplyConfigToNewLeavesUnstatedSettings(t *testing.T) {
	const policies = "policies:\n  - {name: a, limit: 1, window: 1m}\n"
	store, _ := newStore(t)
	m := middleware.MustNew(store, mustConfig(t, policies).Policies,
		middleware.WithHeaders(middleware.Draft6), middleware.OnStoreError(middleware.FailClosed(9*time.Second)))
	for i := range 2 {
		if err := m.ApplyConfig(mustConfig(t, policies)); err != nil {
			t.Errorf("reload %d of a file of policies alone: %v, want nil", i+1, err)
		}
	}
	for _, tc := range []struct{ yaml, field string }{
		{"headers: ietf\n" + policies, "headers"},
		{"failure_mode: open\n" + policies, "failure_mode"},
		{"failure_mode: closed\nfailure_retry_after: 2s\n" + policies, "failure_retry_after"},
	} {
		err := m.ApplyConfig(mustConfig(t, tc.yaml))
		if !errors.Is(err, middleware.ErrRestartNeeded) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("reload of a file stating %s: %v, want ErrRestartNeeded naming it", tc.field, err)
		}
	}
	if err := m.ApplyConfig(mustConfig(t, "headers: draft-6\nfailure_mode: closed\nfailure_retry_after: 9s\n"+policies)); err != nil {
		t.Errorf("reload of a file stating the settings in force: %v, want nil", err)
	}
}

// TestApplyConfigComparesRetryAfterAsSent: the failure_retry_after of a
// reloaded file was compared with the FailClosed option's duration as
// given, where both are sent as whole seconds, rounded up, at least 1:
// FailClosed(0) or FailClosed(1500ms) and a file stating the same
// Retry-After (1s, 2s) were taken for a change needing a restart, as was a
// file of 1500ms reloaded as 2s under FromConfig.
func TestApplyConfigComparesRetryAfterAsSent(t *testing.T) {
	const policies = "policies:\n  - {name: a, limit: 1, window: 1m}\n"
	for _, tc := range []struct {
		opt  time.Duration
		file string
	}{
		{0, "1s"},
		{1500 * time.Millisecond, "2s"},
		{300 * time.Millisecond, "1s"},
	} {
		store, _ := newStore(t)
		m := middleware.MustNew(store, mustConfig(t, policies).Policies, middleware.OnStoreError(middleware.FailClosed(tc.opt)))
		if err := m.ApplyConfig(mustConfig(t, "failure_mode: closed\nfailure_retry_after: "+tc.file+"\n"+policies)); err != nil {
			t.Errorf("FailClosed(%s), reload stating failure_retry_after: %s: %v, want nil (both send Retry-After %s)", tc.opt, tc.file, err, tc.file)
		}
	}
	store, _ := newStore(t)
	m, err := middleware.FromConfig(store, mustConfig(t, "failure_mode: closed\nfailure_retry_after: 1500ms\n"+policies))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyConfig(mustConfig(t, "failure_mode: closed\nfailure_retry_after: 2s\n"+policies)); err != nil {
		t.Errorf("FromConfig with 1500ms, reload with 2s: %v, want nil (both send Retry-After 2)", err)
	}
}
