package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReplayNginxMainBehindTrustedProxy: nginx's stock "main" log format
// ends with "$http_x_forwarded_for"; behind a load balancer (a trusted
// proxy) its requests are keyed by the client the header names, as the
// same nginx variables logged as JSON are (TestReplayJSONBehindTrustedProxy):
// three clients, none refused for want of a key, none rejected by a limit
// of 1 a minute each.
func TestReplayNginxMainBehindTrustedProxy(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfigFile(t, "trusted_proxies: [10.0.0.0/8]\npolicies:\n  - {name: a, limit: 1, window: 1m}\n")
	var log strings.Builder
	for _, c := range []string{"1", "2", "3"} {
		log.WriteString(`10.0.0.2 - - [10/Mar/2024:12:00:0` + c + ` +0000] "GET / HTTP/1.1" 200 612 "-" "Mozilla/5.0" "203.0.113.` + c + `"` + "\n")
	}
	path := filepath.Join(dir, "access.log")
	if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, path)
	if code != exitOK || !strings.Contains(out, "3 requests, 0 rejected by a limit (0.00%), 0 more refused for want of a key") ||
		!regexp.MustCompile(`\n  keys +3 `).MatchString(out) {
		t.Errorf("exit %d (stderr %q), want 0 with 3 keys and none refused:\n%s", code, errOut, out)
	}
}
