package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayWarnsOfHostNames: a log whose client field holds host names
// (Apache's %h with HostnameLookups On) gives the ip key part no address:
// the replay counted every such request as refused for want of a key
// (400) and exited 1, the only clue a "RemoteAddr is not an IP address"
// under the policy, naming neither the log nor the line, though the
// middleware, which sees the address, refuses none of them. The report and
// standard error warn of it, naming the log, the first line and its host
// name. A log of addresses (and one whose host name comes with a
// forwarding header) draws no such warning.
func TestReplayWarnsOfHostNames(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts.log")
	lines := `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5
crawl-66-249-66-1.googlebot.com - - [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 5
dsl-203-0-113-7.example.net - - [10/Mar/2024:12:00:02 +0000] "GET / HTTP/1.1" 200 5
`
	if err := os.WriteFile(hosts, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", hosts)
	for _, w := range []string{out, errOut} {
		for _, want := range []string{hosts + ": 2 lines give the client as a host name", "line 2", "crawl-66-249-66-1.googlebot.com", "HostnameLookups"} {
			if !strings.Contains(w, want) {
				t.Errorf("no warning of the host names holding %q:\n%s", want, w)
			}
		}
	}

	addrs := filepath.Join(dir, "addrs.log")
	lines = `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5
[2001:db8::1]:443 - - [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 5
fe80::1%eth0 - - [10/Mar/2024:12:00:02 +0000] "GET / HTTP/1.1" 200 5
{"time":"2024-03-10T12:00:03Z","remote_addr":"lb.example.net","x_forwarded_for":"192.0.2.9","method":"GET","path":"/"}
`
	if err := os.WriteFile(addrs, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", addrs)
	if strings.Contains(out+errOut, "host name") {
		t.Errorf("a warning of host names in a log of addresses:\n%s%s", out, errOut)
	}
}
