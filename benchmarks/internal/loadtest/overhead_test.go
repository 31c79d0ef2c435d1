package loadtest

import (
	"context"
	"testing"
	"time"
)

// TestOverhead runs every scenario briefly. It asserts only what the
// machine's speed cannot change: every scenario ran, was measured, and
// admitted every request.
func TestOverhead(t *testing.T) {
	var r *Redis
	if reason := redisSkipReason(t); reason != "" {
		t.Log("Redis scenario skipped: " + reason)
	} else {
		r = requireRedis(t)
	}
	res, err := RunOverhead(context.Background(), OverheadConfig{Conns: 16, MaxDuration: 300 * time.Millisecond, LatDuration: 300 * time.Millisecond, Rounds: 1, Redis: r})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ScenarioNone, ScenarioMemory1, ScenarioMemory1NoCtx, ScenarioMemory4, ScenarioRedis, ScenarioHTTPRate}
	if r == nil {
		want = []string{ScenarioNone, ScenarioMemory1, ScenarioMemory1NoCtx, ScenarioMemory4, ScenarioHTTPRate}
	}
	if len(res) != len(want) {
		t.Fatalf("RunOverhead returned %d scenarios, want %d", len(res), len(want))
	}
	for i, o := range res {
		t.Logf("%-20s max=%.0f/s p50=%s p99=%s sent=%d non200=%d", o.Name, o.MaxRPS, o.P50, o.P99, o.Sent, o.Non200)
		if o.Name != want[i] {
			t.Errorf("scenario %d is %q, want %q", i, o.Name, want[i])
		}
		if o.Non200 != 0 {
			t.Errorf("%s: %d requests not answered 200 (first error %q); every request should be admitted", o.Name, o.Non200, o.FirstError)
		}
		if o.MaxRPS <= 0 || o.Sent == 0 || o.P50 <= 0 || o.P50 > o.P99 || o.P99 > o.Max {
			t.Errorf("%s: not measured: max %.0f/s, %d sent, p50 %s, p99 %s, max %s", o.Name, o.MaxRPS, o.Sent, o.P50, o.P99, o.Max)
		}
	}
}

func TestRunOverheadConfigErrors(t *testing.T) {
	for _, cfg := range []OverheadConfig{
		{Conns: 0, MaxDuration: time.Second, LatDuration: time.Second, Rounds: 1},
		{Conns: 1, MaxDuration: time.Second, LatDuration: time.Second, Rounds: 0},
		{Conns: 1, MaxDuration: time.Second, LatDuration: time.Second, Rounds: 1, Fraction: 2},
	} {
		if _, err := RunOverhead(context.Background(), cfg); err == nil {
			t.Errorf("RunOverhead(%+v): nil error", cfg)
		}
	}
}
