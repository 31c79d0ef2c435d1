package main

import (
	"strings"
	"testing"
)

// TestCheckIPSourceNotAStringOnce: an ip_source that is not a string (a
// number, a list, a mapping, a boolean, null) is one fault, reported once,
// as not a string, with trusted_proxies or trusted_hops or neither; it was
// also reported as wanting trusted_proxies or trusted_hops, which is no
// fix for it.
func TestCheckIPSourceNotAStringOnce(t *testing.T) {
	const policies = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	for _, value := range []string{"5", "[a, b]", "{a: 1}", "true", "~"} {
		for _, trust := range []string{"", "trusted_hops: 1\n", "trusted_proxies: [10.0.0.0/8]\n"} {
			path := writeConfigFile(t, trust+"ip_source: "+value+"\n"+policies)
			out, errOut, code := runCmd("check", path)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if code != exitFindings || len(lines) != 2 || !strings.Contains(lines[0], ": ip_source: must be a string, not ") || lines[1] != path+": 1 problem" {
				t.Errorf("%sip_source: %s: exit %d, output\n%s(stderr %q)\nwant exit 1 and the one problem: ip_source must be a string", trust, value, code, out, errOut)
			}
		}
	}
}
