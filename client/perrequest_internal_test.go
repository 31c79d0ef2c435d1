package client

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestPerRequestHugeLimit: one request's share of a reset is the reset
// divided by the quota's size, rounded up, so a quota of any size with
// none left holds for at least a nanosecond. Rounding up added limit-1 to
// the reset first, which overflowed for a limit near the largest int64:
// the hold came out 0 (or negative), as if quota were left. Through
// serverHold, with OpenAI's and Anthropic's fields.
func TestPerRequestHugeLimit(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, limit := range []int64{1<<63 - 1, 1<<63 - 1<<54, 1 << 62, 1_000_000_000_000} {
		for _, reset := range []time.Duration{time.Second, 8759 * time.Hour} {
			want := reset / time.Duration(limit)
			if reset%time.Duration(limit) != 0 {
				want++
			}
			lim := strconv.FormatInt(limit, 10)
			for name, h := range map[string]http.Header{
				"openai": {
					canonOpenAIRemaining: {"0"},
					canonOpenAIReset:     {reset.String()},
					canonOpenAILimit:     {lim},
				},
				"anthropic": {
					canonAnthropicRemaining: {"0"},
					canonAnthropicReset:     {now.Add(reset).Format(time.RFC3339)},
					canonAnthropicLimit:     {lim},
				},
			} {
				if got := serverHold(h, now); got != want {
					t.Errorf("%s: reset %v, limit %d: hold %v, want %v", name, reset, limit, got, want)
				}
			}
		}
	}
}
