package main

import (
	"os"
	"strings"
	"testing"
)

// TestReplayW3CAndForwardedFor replays the sample IIS log and Apache log
// with a leading X-Forwarded-For list, as detected: every line read (the
// W3C directives are no requests), the same report as with --format w3c
// for the IIS log, and under trusted proxies the client found behind
// them, as the middleware would: 203.0.113.7, whatever the proxy, and not
// the address a client spoofed at the left of the list.
func TestReplayW3CAndForwardedFor(t *testing.T) {
	const iis = "internal/logparse/testdata/iis_w3c.log"
	auto, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", iis)
	if code == exitUsage || strings.Contains(auto, "malformed") {
		t.Fatalf("exit %d, stderr %q; report:\n%s", code, errOut, auto)
	}
	if !strings.Contains(auto, "8 requests") {
		t.Errorf("report does not count the log's 8 requests:\n%s", auto)
	}
	forced, _, _ := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "--format", "w3c", iis)
	if forced != auto {
		t.Errorf("--format w3c reports otherwise than auto:\n%s\nauto:\n%s", forced, auto)
	}
	cfg := t.TempDir() + "/xff.yaml"
	if err := os.WriteFile(cfg, []byte("trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\npolicies:\n  - {name: per-ip, limit: 2, window: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, "internal/logparse/testdata/apache_xff.log")
	if code != exitFindings || !strings.Contains(out, "203.0.113.7 (1)") {
		t.Errorf("exit %d (stderr %q), want 1 and 203.0.113.7 rejected once (3 requests, 2 per minute):\n%s", code, errOut, out)
	}
}
