package middleware_test

import (
	"errors"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestConfigOpenOverridesEarlierMode: a configuration that states
// failure_mode open asks for FailOpen, so its options, placed after a
// caller's OnStoreError(FailClosed(...)), let a request through while the
// store fails instead of answering 503.
func TestConfigOpenOverridesEarlierMode(t *testing.T) {
	cfg := mustConfig(t, "failure_mode: open\npolicies:\n  - {name: p, limit: 5, window: 1m}\n")
	copts, err := middleware.ConfigOptions(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, copts...)
	m := middleware.MustNew(&failing{}, cfg.Policies, opts...)
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != http.StatusOK {
		t.Errorf("store down, failure_mode open after FailClosed: %d, want 200", w.Code)
	}
}

// TestFromConfigRefusesBadOption: an option of the caller's that New
// refuses is FromConfig's error, not a panic.
func TestFromConfigRefusesBadOption(t *testing.T) {
	store, _ := newStore(t)
	cfg := mustConfig(t, "policies:\n  - {name: p, limit: 5, window: 1m}\n")
	m, err := middleware.FromConfig(store, cfg, middleware.WithClock(nil))
	if m != nil || err == nil {
		t.Fatalf("FromConfig(WithClock(nil)) = %v, %v; want nil and an error", m, err)
	}
}

// TestRetryAfterSettingAtTheLargestSeconds: FailClosed durations that send
// the same Retry-After are the same setting, up to the last whole second a
// Duration holds (9,223,372,036 s); within a second of the largest
// Duration, a duration is compared as it is.
func TestRetryAfterSettingAtTheLargestSeconds(t *testing.T) {
	store, _ := newStore(t)
	const last = time.Duration(math.MaxInt64 / int64(time.Second) * int64(time.Second)) // 9,223,372,036 s
	for _, tc := range []struct {
		name      string
		from, to  time.Duration
		restarted bool
	}{
		{"both round up to the last whole second", last - 700*time.Millisecond, last - 300*time.Millisecond, false},
		{"both within a second of the largest", math.MaxInt64, math.MaxInt64 - 1, true},
	} {
		cfg := mustConfig(t, "failure_mode: closed\npolicies:\n  - {name: p, limit: 5, window: 1m}\n")
		cfg.FailureRetryAfter = tc.from
		m, err := middleware.FromConfig(store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		next := *cfg
		next.FailureRetryAfter = tc.to
		err = m.ApplyConfig(&next)
		if got := errors.Is(err, middleware.ErrRestartNeeded); got != tc.restarted || (err != nil && !got) {
			t.Errorf("%s: ApplyConfig(%v after %v) = %v; want a restart needed: %v", tc.name, tc.to, tc.from, err, tc.restarted)
		}
	}
}
