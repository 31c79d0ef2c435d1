package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// failure_retry_after is the Retry-After of failure_mode closed's 503: set
// under another mode (a file that forgot failure_mode: closed, so fails
// open) it would do nothing, silently, as burst would on a fixed window; it
// is refused at the field, saying what it needs. Under closed it is taken.
func TestConfigFailureRetryAfterNeedsClosed(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, tc := range []struct {
		name, doc string
		line, col int
		mode      string
	}{
		{"no mode", "failure_retry_after: 30s\n", 1, 22, "open"},
		{"open", "failure_mode: open\nfailure_retry_after: 30s\n", 2, 22, "open"},
		{"fallback, after", "failure_retry_after: 30s\nfailure_mode: fallback\n", 1, 22, "fallback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.ParseConfig([]byte(tc.doc+pol), "c.yaml")
			errs := policy.ConfigErrors(err)
			if len(errs) != 1 {
				t.Fatalf("ParseConfig(%q) = %v; want one error", tc.doc, err)
			}
			ce := errs[0]
			if ce.Field != "failure_retry_after" || ce.Line != tc.line || ce.Column != tc.col ||
				!strings.Contains(ce.Reason, "failure_mode closed") || !strings.Contains(ce.Reason, tc.mode) {
				t.Errorf("error %v; want %d:%d failure_retry_after: ...failure_mode closed... (%s)", ce, tc.line, tc.col, tc.mode)
			}
		})
	}
	cfg, err := policy.ParseConfig([]byte("failure_mode: closed\nfailure_retry_after: 30s\n"+pol), "c.yaml")
	if err != nil || cfg.FailureRetryAfter != 30*time.Second {
		t.Fatalf("closed with failure_retry_after 30s: %v, %v", cfg, err)
	}
}

// A failure_mode the file gets wrong ("Closed", a typo, null) is reported
// at failure_mode, once: failure_retry_after is not refused as well for a
// mode the file did not ask for. The second error said "failure_mode is
// open" to a user who had written (a misspelling of) closed.
func TestConfigFailureRetryAfterUnderABadMode(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, mode := range []string{"Closed", "clsoed", "~", "[closed]"} {
		doc := "failure_mode: " + mode + "\nfailure_retry_after: 30s\n" + pol
		_, err := policy.ParseConfig([]byte(doc), "c.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "failure_mode" || errs[0].Line != 1 {
			t.Errorf("ParseConfig(%q) = %v; want one error, at 1: failure_mode", doc, err)
		}
	}
}

// failure_retry_after had no upper bound: a year (8760h, a slip for
// 8760s or a unit misread) loaded, and every client that honours
// Retry-After would have stayed away for a year after a store blip. It is
// at most policy.MaxFailureRetryAfter, inclusive; beyond, the error names
// the field and the bound.
func TestConfigFailureRetryAfterUpperBound(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"1h", true},
		{"3600s", true},
		{"3600001ms", false},
		{"2h", false},
		{"8760h", false},
		{"365d", false},
	} {
		_, err := policy.ParseConfig([]byte("failure_mode: closed\nfailure_retry_after: "+tc.value+"\n"+pol), "c.yaml")
		if tc.ok {
			if err != nil {
				t.Errorf("failure_retry_after %s: %v, want it accepted", tc.value, err)
			}
			continue
		}
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "failure_retry_after" || errs[0].Line != 2 || errs[0].Column != 22 ||
			!strings.Contains(errs[0].Reason, "at most 1h") {
			t.Errorf("failure_retry_after %s: %v, want one error at 2:22 failure_retry_after: ...at most 1h...", tc.value, err)
		}
	}
}
