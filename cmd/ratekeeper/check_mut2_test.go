package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCheckArgumentCount: check wants exactly one FILE: none or two is a
// usage error that says so and shows the command's usage.
func TestCheckArgumentCount(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"check", "a.yaml", "b.yaml"}} {
		out, errOut, code := runCmd(args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "ratekeeper check: want exactly one FILE") || !strings.Contains(errOut, "Usage: ratekeeper check FILE") {
			t.Errorf("ratekeeper %q: exit %d, stdout %q, stderr %q; want exit 2, the problem and the usage on stderr", args, code, out, errOut)
		}
	}
}

// TestCheckStdinReadError: standard input that cannot be read is an input
// error (exit 2) naming it, not a configuration checked from what was read.
func TestCheckStdinReadError(t *testing.T) {
	defer func(r io.Reader) { checkStdin = r }(checkStdin)
	checkStdin = io.MultiReader(strings.NewReader("policies:\n"), iotest{errors.New("input/output error")})
	out, errOut, code := runCmd("check", "-")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "ratekeeper check: reading standard input: input/output error") {
		t.Errorf("check - on failing stdin: exit %d, stdout %q, stderr %q; want exit 2 and the read error", code, out, errOut)
	}
}

// writeConfigFile writes a configuration into a temporary file and
// returns its path.
func writeConfigFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckEffectiveConfig: check prints failure_mode closed with its
// Retry-After, a sliding_buckets limit with its buckets, a leaky_queue's
// with its max delay, and what a policy applies to: its methods, routes
// and count, none for count: all.
func TestCheckEffectiveConfig(t *testing.T) {
	path := writeConfigFile(t, `failure_mode: closed
failure_retry_after: 7s
policies:
  - {name: buckets, limit: 60, window: 1m, algorithm: sliding_buckets, buckets: 6, methods: [POST, PUT], routes: ["/a", "/b"], count: failed}
  - {name: queue, limit: 10, window: 1s, algorithm: leaky_queue, max_delay: 2s}
  - {name: all, limit: 10, window: 1s, count: all}
`)
	out, errOut, code := runCmd("check", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, re := range []string{
		`(?m)^headers ietf; on store failure: closed \(503, Retry-After 7s\)$`,
		`(?m)^buckets +sliding_buckets +60 per 1m0s, 6 buckets +\S+ +ip +reject-400 +methods POST,PUT; routes /a, /b; count: failed +4$`,
		`(?m)^queue +leaky_queue +10 per 1s, max delay 2s +\S+ +ip +reject-400 +all requests +5$`,
		`(?m)^all +sliding_window +10 per 1s +\S+ +ip +reject-400 +all requests +6$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
}

// TestCheckOneOfEach: one policy, one trusted proxy, one piece of advice
// and one problem are reported as several are.
func TestCheckOneOfEach(t *testing.T) {
	out, _, _ := runCmd("check", writeConfigFile(t, "trusted_proxies: [\"10.0.0.0/8\"]\npolicies:\n  - {name: a, limit: 5, window: 1m}\n"))
	if !strings.Contains(out, "\nclient IP: x-forwarded-for from trusted proxies 10.0.0.0/8; IPv4 by /32, IPv6 by /64\n") {
		t.Errorf("one trusted proxy: output:\n%s", out)
	}
	out, _, code := runCmd("check", writeConfigFile(t, "policies:\n  - {name: boundary, limit: 100, window: 1m, algorithm: fixed_window}\n"))
	if code != exitOK || !strings.Contains(out, ": valid, 1 policy\n") || !strings.Contains(out, "\nadvice (the configuration is valid; these are choices often regretted):\n  boundary (line 2): fixed_window admits up to 200 requests") {
		t.Errorf("one policy with advice: exit %d, output:\n%s", code, out)
	}
	path := writeConfigFile(t, "policies:\n  - {name: a, limit: 0, window: 1m}\n")
	out, errOut, code := runCmd("check", path)
	if want := path + ":2:22: policies[0].limit: must be positive, got 0\n" + path + ": 1 problem\n"; code != exitFindings || out != want {
		t.Errorf("one problem: exit %d, output %q (stderr %q); want exit 1 and %q", code, out, errOut, want)
	}
}

// TestCheckColumnsAligned: the policy table's columns line up whatever
// the cells hold (a route with '<' and '>' is text, not an HTML tag).
func TestCheckColumnsAligned(t *testing.T) {
	out, errOut, code := runCmd("check", writeConfigFile(t, "policies:\n  - {name: a, limit: 5, window: 1m, routes: [\"/a<b>\"]}\n  - {name: b, limit: 5, window: 1m}\n"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	_, table, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	col := strings.Index(lines[0], "LINE")
	for _, l := range lines[1:] {
		if i := strings.LastIndex(l, " ") + 1; i != col {
			t.Errorf("LINE column at %d in %q, %d in the header:\n%s", i, l, col, table)
		}
	}
}

// TestCheckRetryAfterAsSent: a failure_retry_after that is not whole
// seconds is sent rounded up (Retry-After holds whole seconds: 1500ms
// sends "Retry-After: 2"); check printed "Retry-After 1.5s", a value no
// response carries. It now says what is sent too.
func TestCheckRetryAfterAsSent(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"1500ms", `closed (503, Retry-After 1.5s, sent as 2 seconds)`},
		{"7s", `closed (503, Retry-After 7s)`},
		{"1m0.001s", `closed (503, Retry-After 1m0.001s, sent as 61 seconds)`},
	} {
		out, errOut, code := runCmd("check", writeConfigFile(t, "failure_mode: closed\nfailure_retry_after: "+tc.value+"\npolicies:\n  - {name: a, limit: 5, window: 1m}\n"))
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %s", tc.value, code, errOut)
		}
		if !strings.Contains(out, "on store failure: "+tc.want+"\n") {
			t.Errorf("failure_retry_after %s: output\n%s\nwant %q", tc.value, out, tc.want)
		}
	}
}

// TestCheckNAT64Prefixes: the client IP line names the declared NAT64
// translators' prefixes (nat64_prefixes), whose clients are keyed as the
// IPv4 address embedded; a file without them shows the line as before.
func TestCheckNAT64Prefixes(t *testing.T) {
	out, errOut, code := runCmd("check", writeConfigFile(t, "nat64_prefixes: [\"64:ff9b:1::/48\", \"2001:db8:64::/96\"]\npolicies:\n  - {name: a, limit: 5, window: 1m}\n"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if want := "\nclient IP: the connecting address (no trusted proxies); IPv4 by /32, IPv6 by /64; NAT64 prefixes 64:ff9b:1::/48, 2001:db8:64::/96 keyed as IPv4\n"; !strings.Contains(out, want) {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}
}
