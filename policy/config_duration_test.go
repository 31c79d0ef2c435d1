package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDurationOutOfRange: a duration written correctly but too long
// for the field, or for a time.Duration at all, is reported as out of
// range, as "2d" and "25h" are, not as something that is not a duration:
// "9999999h" and "366d" were "not a duration such as 1s, 500ms, 1m or
// 24h", and so was "-1d" where "-24h" is "must be positive".
func TestConfigDurationOutOfRange(t *testing.T) {
	for _, tc := range []struct{ window, want string }{
		{"25h", "must be at most 24h0m0s, got 25h0m0s"}, // as before
		{"2d", "must be at most 24h0m0s, got 48h0m0s"},  // as before
		{"366d", "must be at most 24h0m0s, got 8784h0m0s"},
		{"-1d", "must be positive, got -24h0m0s"},
		{"+48d", "must be at most 24h0m0s, got 1152h0m0s"}, // every digit is one
		{"9999999h", `"9999999h" is out of range: a duration is at most 2562047h47m16.854775807s`},
		{"99999999999999999999d", `"99999999999999999999d" is out of range: a duration is at most 2562047h47m16.854775807s`},
		{"106752d", `"106752d" is out of range: a duration is at most 2562047h47m16.854775807s`},
		{"-9999999h", `"-9999999h" is out of range: a duration is at most 2562047h47m16.854775807s`},
		{"1h9999999h", `"1h9999999h" is out of range: a duration is at most 2562047h47m16.854775807s`},
		{".h", `".h" is not a duration such as 1s, 500ms, 1m or 24h`},
		{"1.2.3s", `"1.2.3s" is not a duration such as 1s, 500ms, 1m or 24h`},
		{"1e3s", `"1e3s" is not a duration such as 1s, 500ms, 1m or 24h`}, // as before
		{"1h1d", `"1h1d" is not a duration such as 1s, 500ms, 1m or 24h (days only whole and alone, as 1d: write 36h for a day and a half)`},
		{"d", `"d" is not a duration such as 1s, 500ms, 1m or 24h (days only whole and alone, as 1d: write 36h for a day and a half)`},
		{"1d12h", `"1d12h" is not a duration such as 1s, 500ms, 1m or 24h (days only whole and alone, as 1d: write 36h for a day and a half)`},
		{"1.5d", `"1.5d" is not a duration such as 1s, 500ms, 1m or 24h (days only whole and alone, as 1d: write 36h for a day and a half)`},
	} {
		doc := "policies:\n  - name: a\n    limit: 1\n    window: " + tc.window + "\n"
		_, err := policy.ParseConfig([]byte(doc), "d.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].window" || errs[0].Line != 4 || errs[0].Reason != tc.want {
			t.Errorf("window: %s: %v; want one error at policies[0].window, line 4: %s", tc.window, err, tc.want)
		}
	}
	for _, ok := range []string{"1d", "+1d", "0.5h", "1h30m", "24h"} {
		doc := "policies:\n  - name: a\n    limit: 1\n    window: " + ok + "\n"
		if _, err := policy.ParseConfig([]byte(doc), "d.yaml"); err != nil {
			t.Errorf("window: %s: %v", ok, err)
		}
	}
}

// TestConfigDurationSpelledOut: a duration with its unit spelt out or
// set apart ("60 seconds", "1min", "2 days") is refused with the duration
// it means as the loader reads it. "60 seconds" was told that days are
// read only whole and alone, for the d of "seconds".
func TestConfigDurationSpelledOut(t *testing.T) {
	const not = " is not a duration such as 1s, 500ms, 1m or 24h"
	for _, tc := range []struct{ window, want string }{
		{"60 seconds", `"60 seconds"` + not + `; write 60s`},
		{"1sec", `"1sec"` + not + `; write 1s`},
		{"1min", `"1min"` + not + `; write 1m`},
		{"5 Minutes", `"5 Minutes"` + not + `; write 5m`},
		{"1 hour", `"1 hour"` + not + `; write 1h`},
		{"2hrs", `"2hrs"` + not + `; write 2h`},
		{"1 day", `"1 day"` + not + `; write 1d`},
		{"500 msec", `"500 msec"` + not + `; write 500ms`},
		{"1.5 minutes", `"1.5 minutes"` + not + `; write 1.5m`},
		{"1 s", `"1 s"` + not + `; write 1s`},
		{"1S", `"1S"` + not + `; write 1s`},
		{"1.5 days", `"1.5 days"` + not + ` (days only whole and alone, as 1d: write 36h for a day and a half)`},
		{"1 fortnight", `"1 fortnight"` + not},
		{"1M", `"1M"` + not}, // a month, or a minute: not guessed
	} {
		doc := "policies:\n  - name: a\n    limit: 1\n    window: " + tc.window + "\n"
		_, err := policy.ParseConfig([]byte(doc), "d.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].window" || errs[0].Reason != tc.want {
			t.Errorf("window: %s: %v; want one error at policies[0].window: %s", tc.window, err, tc.want)
		}
	}
}
