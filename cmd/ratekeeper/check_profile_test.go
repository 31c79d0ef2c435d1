package main

import (
	"strings"
	"testing"
)

// TestCheckHeaderColumnFollowsProfile: the HEADER column of check shows
// the policy's RateLimit-Policy member as the configured profile sends it:
// the named member under ietf, draft -06/-07's `q;w=w` under draft-7 and
// draft-6, and none ("-") under the profiles that send no
// RateLimit-Policy field (legacy, legacy-unix, none).
func TestCheckHeaderColumnFollowsProfile(t *testing.T) {
	for _, tc := range []struct{ headers, want string }{
		{"", `"per-ip";q=100;w=60`},
		{"ietf", `"per-ip";q=100;w=60`},
		{"draft-7", "100;w=60"},
		{"draft-6", "100;w=60"},
		{"legacy", "-"},
		{"legacy-unix", "-"},
		{"none", "-"},
	} {
		doc := "policies:\n  - {name: per-ip, limit: 100, window: 1m}\n"
		if tc.headers != "" {
			doc = "headers: " + tc.headers + "\n" + doc
		}
		out, errOut, code := runCmd("check", writeConfigFile(t, doc))
		if code != exitOK {
			t.Fatalf("headers %q: exit %d, stderr %s", tc.headers, code, errOut)
		}
		var row []string
		for line := range strings.SplitSeq(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "per-ip" {
				row = f
			}
		}
		// POLICY ALGORITHM LIMIT(3 words) HEADER ...
		if len(row) < 6 || row[5] != tc.want {
			t.Errorf("headers %q: policy row %q; want HEADER %s\n%s", tc.headers, row, tc.want, out)
		}
	}
}
