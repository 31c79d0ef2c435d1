package policy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// A value the file holds is quoted in the error about it, but was quoted
// whole, however long: a 100 KB algorithm made an error line of 100 KB (a
// config file may be 256 KB, and Load reports up to 20 errors) in a log or
// a terminal. A value (or a field's name) longer than a few dozen
// characters is cut, its start kept and the cut marked with the length of
// the whole; a shorter one is quoted whole.
func TestConfigErrorsCutLongValues(t *testing.T) {
	const size = 100_000
	big := strings.Repeat("x", size)
	spaced := strings.Repeat("x ", size/2) // a value with blanks
	const pol = "policies:\n  - {name: p, limit: 1, window: 1s}\n"
	in := func(fields string) string { return "policies:\n  - {name: p, limit: 1, window: 1s, " + fields + "}\n" }
	for _, tc := range []struct{ name, doc string }{
		{"headers", "headers: " + big + "\n" + pol},
		{"headers with blanks", "headers: \"" + spaced + "\"\n" + pol},
		{"duration", "policies:\n  - {name: p, limit: 1, window: " + big + "}\n"},
		{"limit", "policies:\n  - {name: p, window: 1s, limit: 1" + strings.Repeat("1", size) + "}\n"},
		{"algorithm", in("algorithm: " + big)},
		{"algorithm JSON", `{"policies": [{"name": "p", "limit": 1, "window": "1s", "algorithm": "` + big + `"}]}`},
		{"route", in(`routes: ["/` + spaced + `"]`)},
		{"route wildcard", in(`routes: ["GET /{` + big + `"]`)},
		{"key part", in(`key: "` + big + `"`)},
		{"header key part", in(`key: "header:` + big + ` y"`)},
		{"fallback", in("key: user, fallback: [" + big + "]")},
		{"on_missing_key", in("on_missing_key: " + big)},
		{"count", in("count: " + big)},
		{"unknown field", big + ": 1\n" + pol},
		{"unknown field with blanks", "\"" + spaced + "\": 1\n" + pol},
		{"trusted_proxies", "trusted_proxies: [" + big + "]\n" + pol},
		{"ip_source", "trusted_hops: 1\nip_source: " + big + "\n" + pol},
		{"ip_source header", "trusted_hops: 1\nip_source: \"header:" + spaced + "\"\n" + pol},
		{"failure_retry_after", "failure_mode: closed\nfailure_retry_after: " + big + "\n" + pol},
		{"YAML tag", in("count: !" + big + " x")},
		{"YAML alias", in("count: *" + big)},
		{"mapping for a string", "trusted_hops: 1\nip_source: {header: \"" + spaced + "\"}\n" + pol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.ParseConfig([]byte(tc.doc), "c.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, ce := range policy.ConfigErrors(err) {
				e := ce.Error()
				if n := len(e); n > 600 {
					t.Errorf("an error of %d bytes: %.200s...", n, e)
				} else if strings.Contains(e, "xxxxxxxxxx") || strings.Contains(e, "x x x x x") {
					// It quotes the value: its start, and how long it is.
					if !strings.Contains(e, "… (") || !strings.Contains(e, " bytes)") {
						t.Errorf("error %q cuts a value without saying so", e)
					}
				}
			}
		})
	}

	// A value of a few dozen characters is quoted whole.
	const long = "an-algorithm-name-of-sixty-characters-long-xxxxxxxxxxxxxxxxx"
	_, err := policy.ParseConfig([]byte(in("algorithm: "+long)), "c.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, strconv.Quote(long)) {
		t.Errorf("algorithm of %d characters: %v, want it quoted whole", len(long), err)
	}
}
