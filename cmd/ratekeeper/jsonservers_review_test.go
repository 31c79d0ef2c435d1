package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReplayCaddyAndTraefikLogs: the README says replay reads JSON lines
// with Caddy's and Traefik's field names, with no --json-* flag. Both
// logs were refused: "no parseable line ... no client address field".
// Each has two POST /login of one client within a minute, and a GET: a
// login policy of 1 a minute rejects one request.
func TestReplayCaddyAndTraefikLogs(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfigFile(t, `policies:
  - {name: login, limit: 1, window: 1m, routes: ["POST /login"]}
`)
	caddy := func(ts, ip, method, uri string) string {
		return `{"level":"info","ts":` + ts + `,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"` + ip +
			`","remote_port":"50000","client_ip":"` + ip + `","proto":"HTTP/2.0","method":"` + method + `","host":"example.com","uri":"` + uri +
			`","headers":{"User-Agent":["curl/8.5.0"]}},"bytes_read":0,"user_id":"","duration":0.001,"size":2,"status":200,"resp_headers":{}}` + "\n"
	}
	traefik := func(start, ip, method, path string) string {
		return `{"ClientAddr":"` + ip + `:50000","ClientHost":"` + ip + `","ClientPort":"50000","ClientUsername":"-","DownstreamStatus":200,` +
			`"Duration":1000000,"RequestHost":"example.com","RequestMethod":"` + method + `","RequestPath":"` + path +
			`","RequestProtocol":"HTTP/1.1","StartUTC":"` + start + `","level":"info","msg":"","time":"` + start + `"}` + "\n"
	}
	for name, log := range map[string]string{
		"caddy.jsonl": caddy("1710072000.1", "192.0.2.1", "POST", "/login") + caddy("1710072000.2", "192.0.2.2", "GET", "/") + caddy("1710072030", "192.0.2.1", "POST", "/login"),
		"traefik.jsonl": traefik("2024-03-10T12:00:00.1Z", "192.0.2.1", "POST", "/login") + traefik("2024-03-10T12:00:00.2Z", "192.0.2.2", "GET", "/") +
			traefik("2024-03-10T12:00:30Z", "192.0.2.1", "POST", "/login"),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, path)
		if code != exitFindings {
			t.Errorf("%s: exit %d, want %d; stderr:\n%s", name, code, exitFindings, errOut)
			continue
		}
		if errOut != "" {
			t.Errorf("%s: stderr %q, want nothing (no warning of missing paths or methods)", name, errOut)
		}
		if !strings.HasPrefix(out, "replayed 3 requests from 3 lines") {
			t.Errorf("%s: report starts %q, want 3 requests from 3 lines", name, strings.SplitN(out, "\n", 2)[0])
		}
		if m := regexp.MustCompile(`(?m)^policy login: .*\n  requests +(\d+)\n  rejected +(\d+) `).FindStringSubmatch(out); m == nil || m[1] != "2" || m[2] != "1" {
			t.Errorf("%s: policy login %v, want 2 requests, 1 rejected:\n%s", name, m, out)
		}
	}
}

// TestReplayJSONBehindTrustedProxy: a JSON log of requests from a trusted
// proxy, with nginx's $http_x_forwarded_for, is keyed by the client the
// header names, as a Common Log Format line's list is: three clients,
// none refused for want of a key. Every request was refused ("trusted
// peer sent no forwarding header") unless --json-header named the field.
func TestReplayJSONBehindTrustedProxy(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfigFile(t, "trusted_proxies: [10.0.0.0/8]\npolicies:\n  - {name: a, limit: 1, window: 1m}\n")
	var log strings.Builder
	for _, c := range []string{"1", "2", "3"} {
		log.WriteString(`{"time":"2024-03-10T12:00:0` + c + `Z","remote_addr":"10.0.0.2","request":"GET / HTTP/1.1","status":200,"http_x_forwarded_for":"203.0.113.` + c + `"}` + "\n")
	}
	path := filepath.Join(dir, "nginx.jsonl")
	if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, path)
	if code != exitOK || !strings.Contains(out, "3 requests, 0 rejected by a limit (0.00%), 0 more refused for want of a key") ||
		!regexp.MustCompile(`\n  keys +3 `).MatchString(out) {
		t.Errorf("exit %d (stderr %q), want 0 with 3 keys and none refused:\n%s", code, errOut, out)
	}
}
