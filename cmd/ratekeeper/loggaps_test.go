package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayWarnsOfKeyPartsTheLogLacks: a policy keyed by a request header,
// a cookie or the user, replayed on a log that records none of them (a
// Combined log records no request header but Referer and User-Agent; its
// user field is "-" for an application's own sign-in), found a key for
// none of its requests: the report counted every one of them refused for
// want of a key (400) and exited 1, the only clue "keyfunc: no X-Api-Key
// header" or "keyfunc: no user ID in the request context" under the
// first such policy, and nothing at all under the others (the request was
// refused before them), though the traffic may well carry the header. The
// report and standard error now say, for each policy none of whose keys
// the log can give, which part no line gives. A policy whose key has
// another way (fallback: ip) and a log that gives the parts draw no
// such warning.
func TestReplayWarnsOfKeyPartsTheLogLacks(t *testing.T) {
	cfg := writeConfigFile(t, `policies:
  - name: api
    limit: 3
    window: 1m
    key: header:X-Api-Key
  - name: per-user
    limit: 3
    window: 1m
    key: [user, method]
  - name: by-cookie
    limit: 3
    window: 1m
    key: cookie:session
    on_missing_key: skip
  - name: login
    limit: 3
    window: 1m
    key: [ip, header:X-Login-User]
    fallback: ip
`)
	dir := t.TempDir()
	clf := filepath.Join(dir, "access.log")
	lines := `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"
192.0.2.2 - - [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"
`
	if err := os.WriteFile(clf, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, clf)
	if code != exitFindings {
		t.Errorf("exit %d, want %d (the refusals are still counted)", code, exitFindings)
	}
	for _, w := range []string{out, errOut} {
		for _, want := range []string{
			`policy api (line 2): no line of the logs gives the X-Api-Key header`,
			`policy per-user (line 6): no line of the logs gives a user`,
			`policy by-cookie (line 10): no line of the logs gives a Cookie header`,
		} {
			if !strings.Contains(w, want) {
				t.Errorf("no warning %q in\n%s", want, w)
			}
		}
		if strings.Contains(w, "policy login (line") {
			t.Errorf("a warning of policy login, whose fallback is ip:\n%s", w)
		}
	}

	// A log that gives them all: no warning.
	jsonLog := filepath.Join(dir, "access.jsonl")
	lines = `{"time":"2024-03-10T12:00:00Z","remote_addr":"192.0.2.1","request":"GET / HTTP/1.1","user":"ann","key":"k1","cookie":"session=s1","status":200}
`
	if err := os.WriteFile(jsonLog, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = runCmd("replay", "--quiet", "--config", cfg, "--json-header", "X-Api-Key=key", "--json-header", "Cookie=cookie", jsonLog)
	if strings.Contains(out+errOut, "no line of the logs") {
		t.Errorf("a warning of a part the log gives:\n%s%s", out, errOut)
	}
}
