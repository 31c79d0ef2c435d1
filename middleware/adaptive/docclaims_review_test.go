package adaptive_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestQuietPeriodHealthyBaselineUnmoved: Config.MinSamples "is the
// fewest requests a period needs to be judged; a quieter period counts
// as healthy but does not move the baseline". A period of 19 requests
// of a second each, all failing, raises a lowered level and leaves a
// learned baseline where it was.
func TestQuietPeriodHealthyBaselineUnmoved(t *testing.T) {
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{})
	if got := c.Baseline(); got != 0 {
		t.Fatalf("Baseline() = %v before any period, want 0 (not learned)", got)
	}
	period(t, c, clock, 20, 0, 10*time.Millisecond) // learned
	base := c.Baseline()
	if base == 0 {
		t.Fatal("no baseline learned from a period of 20 requests")
	}
	period(t, c, clock, 20, 20, time.Second) // slow and failing: 0.8
	if got := c.Level(); got != 0.8 {
		t.Fatalf("level %v after a slow and failing period, want 0.8", got)
	}
	base = c.Baseline()
	period(t, c, clock, 19, 19, time.Second) // quiet
	if got := c.Level(); got != 0.9 {
		t.Errorf("level %v after a quiet period, want 0.9 (healthy)", got)
	}
	if got := c.Baseline(); got != base {
		t.Errorf("Baseline() = %v after a quiet period, want %v (unmoved)", got, base)
	}
}

// TestSetLimitFailureRecord: Config.Logger: "A SetLimit of the target
// that fails in an evaluation a request made is logged there too, at
// Error, "ratekeeper: adaptive limit not set", with the level and the
// error".
func TestSetLimitFailureRecord(t *testing.T) {
	var buf bytes.Buffer
	target := &refusingTarget{Middleware: newMiddleware(t, 100), refuse: true}
	c, clock := newController(t, target, adaptive.Config{Baseline: time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	observe(c, 20, 20, time.Second)
	clock.Advance(time.Minute)
	c.Observe(time.Millisecond, 200) // judges the period: 0.8, refused
	var rec map[string]any
	for line := range bytes.Lines(buf.Bytes()) {
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["level"] == "ERROR" {
			rec = r
		}
	}
	if rec == nil {
		t.Fatalf("no ERROR record in:\n%s", buf.String())
	}
	if rec["msg"] != "ratekeeper: adaptive limit not set" || rec["limit_level"] != 0.8 || rec["error"] != errRefused.Error() {
		t.Errorf("record %v, want msg %q, limit_level 0.8, error %q", rec, "ratekeeper: adaptive limit not set", errRefused)
	}
}
