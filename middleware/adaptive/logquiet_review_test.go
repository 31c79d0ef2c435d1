package adaptive_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestLevelRecordOfAQuietPeriod: Config.Logger's record gives "the p99 of
// the requests that ended in the period". A period with fewer than
// MinSamples requests is not judged (it counts as healthy) but its
// requests ended all the same: the record of the level it raised gives
// their p99, not 0s beside requests 5; and a period with no request
// ended gives none (0s).
func TestLevelRecordOfAQuietPeriod(t *testing.T) {
	var buf bytes.Buffer
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{Baseline: time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	period(t, c, clock, 20, 20, 10*time.Millisecond) // 0.8
	period(t, c, clock, 5, 0, 3*time.Millisecond)    // quiet: 0.9
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil { // empty: 1
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%v p99 %v requests %v", rec["limit_level"], rec["p99"], rec["requests"]))
	}
	want := []string{
		fmt.Sprintf("0.8 p99 %v requests 20", bucketUpper(10*time.Millisecond)),
		fmt.Sprintf("0.9 p99 %v requests 5", bucketUpper(3*time.Millisecond)),
		"1 p99 0s requests 0",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
