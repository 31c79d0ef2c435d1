package client

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestDraft6ResetAsUnixTime: draft-6's RateLimit-Reset is delay-seconds,
// but servers that mix it up with the legacy field send a Unix time there
// (seconds or milliseconds). A value in the billions is no wait any server
// means (32 years and more): it is read as the legacy field reads it, an
// instant in the server's clock, instead of a wait cut to the longest hint
// (a minute) whatever the instant was. Delay-seconds keep their meaning.
func TestDraft6ResetAsUnixTime(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, reset string
		want        time.Duration
	}{
		{"delay-seconds", "8", 8 * time.Second},
		{"Unix seconds", strconv.FormatInt(now.Add(8*time.Second).Unix(), 10), 8 * time.Second},
		{"Unix milliseconds", strconv.FormatInt(now.Add(8500*time.Millisecond).UnixMilli(), 10), 8500 * time.Millisecond},
		{"Unix seconds passed", strconv.FormatInt(now.Add(-time.Minute).Unix(), 10), 0},
	} {
		h := http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {tc.reset}}
		if got := serverHold(h, now); got != tc.want {
			t.Errorf("%s (RateLimit-Reset: %s): hold %v, want %v", tc.name, tc.reset, got, tc.want)
		}
	}
}
