package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDurationBelowNanosecondIsRefused: a duration with a fraction
// of a nanosecond, in any duration field, is refused at the field.
// time.ParseDuration drops such a fraction ("1.0000000001s" was a window
// of 1s, "0.5ns" a max_delay of 0) and computes fractions in floating
// point, which rounded "1.999999999999999999999999s" up to 2s: the file
// loaded, meaning something else than it said.
func TestConfigDurationBelowNanosecondIsRefused(t *testing.T) {
	const below = "has a fraction below a nanosecond, which a duration cannot hold"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"window", "policies:\n  - name: a\n    limit: 1\n    window: 1.0000000001s\n",
			[]string{`4:13 policies[0].window: "1.0000000001s" ` + below}},
		{"window rounded up", "policies:\n  - name: a\n    limit: 1\n    window: 1.999999999999999999999999s\n",
			[]string{`4:13 policies[0].window: "1.999999999999999999999999s" ` + below}},
		{"window in the second number", "policies:\n  - name: a\n    limit: 1\n    window: 1h0.5ns\n",
			[]string{`4:13 policies[0].window: "1h0.5ns" ` + below}},
		{"max_delay and window, both", "policies:\n  - name: a\n    algorithm: leaky_queue\n    limit: 1\n    window: 1.0005µs1s\n    max_delay: 0.5ns\n",
			[]string{`5:13 policies[0].window: "1.0005µs1s" ` + below, `6:16 policies[0].max_delay: "0.5ns" ` + below}},
		{"max_delay in hours", "policies:\n  - name: a\n    algorithm: leaky_queue\n    limit: 1\n    window: 1s\n    max_delay: 0.000000000001h\n",
			[]string{`6:16 policies[0].max_delay: "0.000000000001h" ` + below}},
		{"max_delay in halves", "policies:\n  - name: a\n    algorithm: leaky_queue\n    limit: 1\n    window: 1s\n    max_delay: 0.5ns0.5ns\n",
			[]string{`6:16 policies[0].max_delay: "0.5ns0.5ns" ` + below}},
		{"failure_retry_after", "failure_mode: closed\nfailure_retry_after: 1.0000000001s\npolicies:\n  - {name: a, limit: 1, window: 1s}\n",
			[]string{`2:22 failure_retry_after: "1.0000000001s" ` + below}},
		{"json", `{"policies": [{"name": "a", "limit": 1, "window": "-1.0000000001s"}]}`,
			[]string{`1:51 policies[0].window: "-1.0000000001s" ` + below}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "d.yaml"
			if tc.name == "json" {
				file = "d.json"
			}
			cfg, err := policy.ParseConfig([]byte(tc.doc), file)
			if err == nil {
				t.Fatalf("ParseConfig: no error; window %v, max_delay %v, failure_retry_after %v",
					cfg.Policies[0].Spec().Window, cfg.Policies[0].Spec().MaxDelay, cfg.FailureRetryAfter)
			}
			wantProblems(t, err, tc.want)
		})
	}
}

// TestConfigDurationIsExact: a duration of whole nanoseconds is read
// exactly, however it is written. time.ParseDuration, computing fractions
// in floating point, read "0.50000000000000h" as 29m59.999999999s.
func TestConfigDurationIsExact(t *testing.T) {
	for _, tc := range []struct {
		window, maxDelay, retryAfter string
		want                         [3]time.Duration
	}{
		{"0.50000000000000h", "0.00000000001h", "0.30000000000000h",
			[3]time.Duration{30 * time.Minute, 36, 18 * time.Minute}},
		{"1.50000000000000000000000s", "1.5us", "0.60000000000000h",
			[3]time.Duration{1500 * time.Millisecond, 1500, 36 * time.Minute}},
		{"0.90000000000000h", "1.5µs", "+1.10000000000000000s",
			[3]time.Duration{54 * time.Minute, 1500, 1100 * time.Millisecond}},
		{"23h59m59.999999999s", "1.5μs2ns", "59m59.999999999s",
			[3]time.Duration{24*time.Hour - 1, 1502, time.Hour - 1}},
	} {
		doc := "failure_mode: closed\nfailure_retry_after: " + tc.retryAfter + "\npolicies:\n" +
			"  - {name: a, algorithm: leaky_queue, limit: 1, window: " + tc.window + ", max_delay: " + tc.maxDelay + "}\n"
		cfg, err := policy.ParseConfig([]byte(doc), "d.yaml")
		if err != nil {
			t.Errorf("%s, %s, %s: %v", tc.window, tc.maxDelay, tc.retryAfter, err)
			continue
		}
		s := cfg.Policies[0].Spec()
		if got := [3]time.Duration{s.Window, s.MaxDelay, cfg.FailureRetryAfter}; got != tc.want {
			t.Errorf("window %s, max_delay %s, failure_retry_after %s = %d, want %d", tc.window, tc.maxDelay, tc.retryAfter, got, tc.want)
		}
	}
}
