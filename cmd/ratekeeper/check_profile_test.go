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

// TestCheckHeaderColumnSharedQuota: drafts -06 and -07 identify a policy
// by its quota, and of the policies of a request that share one the
// middleware sends the member of the longest window alone (the first in
// order among equal windows; policy.Set.LegacyPolicyHeader). Under
// draft-7 a policy of 10 per second beside one of 10 per minute, both on
// every request, is never sent, and check's HEADER column, which shows
// the policy as the profile sends it, showed "10;w=1" for it all the same.
func TestCheckHeaderColumnSharedQuota(t *testing.T) {
	doc := `headers: draft-7
policies:
  - {name: a, limit: 10, window: 1s}
  - {name: b, limit: 10, window: 1m}
  - {name: c, limit: 10, window: 1m, routes: ["POST /login"]}
  - {name: d, limit: 5, window: 1m}
`
	out, errOut, code := runCmd("check", writeConfigFile(t, doc))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	want := map[string]string{
		"a": "10;w=1 (not sent with b)", // nor with c, which comes after b
		"b": "10;w=60",
		"c": "10;w=60 (not sent with b)", // an equal window: the first in order is sent
		"d": "5;w=60",
	}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || want[f[0]] == "" {
			continue
		}
		if !strings.Contains(line, "  "+want[f[0]]+"  ") {
			t.Errorf("policy %s: row %q; want HEADER %q", f[0], line, want[f[0]])
		}
		delete(want, f[0])
	}
	if len(want) > 0 {
		t.Errorf("no rows for %v:\n%s", want, out)
	}
}
