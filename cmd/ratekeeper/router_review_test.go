package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayRouterFlag: --router chi replays a chi application's routes as
// chi routes them. Under a policy on "/" (the README's quick start routes
// r.Get("/", home)), requests to other paths are not the home page's under
// chi, where the replay, routing as a ServeMux, put every path under "/"
// and rejected them: a replay of a chi application's log could not be
// made to route as chi for patterns a ServeMux takes too. --router
// servemux refuses a pattern that is no ServeMux pattern, and an unknown
// router is a usage error.
func TestReplayRouterFlag(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "home.yaml")
	if err := os.WriteFile(cfg, []byte("policies:\n  - {name: home, limit: 2, window: 1m, routes: [\"/\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := range 6 {
		path := []string{"/", "/about", "/items/1"}[i%3]
		fmt.Fprintf(&log, "192.0.2.1 - - [10/Mar/2024:12:00:%02d +0000] \"GET %s HTTP/1.1\" 200 1\n", i, path)
	}
	name := filepath.Join(dir, "access.log")
	if err := os.WriteFile(name, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		router   string
		code     int
		requests string
	}{
		{"", exitFindings, "6 requests, 4 rejected"}, // auto: a ServeMux, "/" every path
		{"servemux", exitFindings, "6 requests, 4 rejected"},
		{"chi", exitOK, "2 requests, 0 rejected"}, // the root alone
		{"CHI", exitOK, "2 requests, 0 rejected"},
	} {
		args := []string{"replay", "--quiet", "--config", cfg}
		if c.router != "" {
			args = append(args, "--router", c.router)
		}
		out, errOut, code := runCmd(append(args, name)...)
		if code != c.code || !strings.Contains(out, "all policies together: "+c.requests) {
			t.Errorf("--router %q: exit %d (stderr %q), want %d and %q:\n%s", c.router, code, errOut, c.code, c.requests, out)
		}
	}
	chiOnly := filepath.Join(dir, "chi.yaml")
	if err := os.WriteFile(chiOnly, []byte("policies:\n  - {name: items, limit: 2, window: 1m, routes: [\"/items/{id:[0-9]+}\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCmd("replay", "--quiet", "--router", "servemux", "--config", chiOnly, name); code != exitUsage || !strings.Contains(errOut, "/items/{id:[0-9]+}") {
		t.Errorf("--router servemux with a chi-only route: exit %d, stderr %q; want %d naming the route", code, errOut, exitUsage)
	}
	if _, errOut, code := runCmd("replay", "--quiet", "--router", "gin", "--config", cfg, name); code != exitUsage || !strings.Contains(errOut, `unknown router "gin"`) {
		t.Errorf("--router gin: exit %d, stderr %q; want %d saying the router is unknown", code, errOut, exitUsage)
	}
}
