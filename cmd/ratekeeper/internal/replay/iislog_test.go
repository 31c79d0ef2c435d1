package replay

import (
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestIISPlusEncodedKeys replays an IIS log under keys that read fields
// IIS writes with '+' for a space: a cookie (cs(Cookie)
// "sid=a1;+lang=en", the second cookie's name read as "+lang"), the
// client behind a proxy from a Forwarded field ("for=a,+for=b", the
// second element unreadable), and the user (cs-username "JOE+BLOGGS").
// One request per minute per key: of each client's two requests the
// second is refused, and none lacks a key. The cookie and Forwarded keys
// found no key on any request before.
func TestIISPlusEncodedKeys(t *testing.T) {
	const log = "#Software: Microsoft Internet Information Services 10.0\n" +
		"#Date: 2024-03-10 12:00:00\n" +
		"#Fields: date time c-ip cs-method cs-uri-stem cs-username cs(Cookie) cs(Forwarded)\n" +
		"2024-03-10 12:00:00 10.0.0.2 GET / JOE+BLOGGS sid=a1;+lang=en for=203.0.113.7,+for=10.0.0.3\n" +
		"2024-03-10 12:00:01 10.0.0.2 GET / JOE+BLOGGS sid=a2;+lang=en for=203.0.113.7,+for=10.0.0.3\n" +
		"2024-03-10 12:00:02 10.0.0.2 GET / ann sid=a3;+lang=de for=198.51.100.9,+for=10.0.0.3\n" +
		"2024-03-10 12:00:03 10.0.0.2 GET / ann sid=a4;+lang=de for=198.51.100.9,+for=10.0.0.3\n"
	for _, tc := range []struct{ name, config, top string }{
		{"cookie", "policies:\n  - {name: k, limit: 1, window: 1m, key: cookie:lang}\n", "en"},
		{"forwarded", "trusted_proxies: [10.0.0.0/8]\nip_source: forwarded\npolicies:\n  - {name: k, limit: 1, window: 1m}\n", "203.0.113.7"},
		{"user", "policies:\n  - {name: k, limit: 1, window: 1m, key: user}\n", "JOE BLOGGS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := logparse.NewReader(strings.NewReader(log), "u_ex240310.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := replayEntries(t, tc.config, Options{}, readEntries(t, r)).Policies[0]
			if p.Requests != 4 || p.NoKey != 0 || p.Rejected != 2 || !slices.Contains(p.Top, KeyCount{Key: tc.top, Count: 1}) {
				t.Errorf("requests %d, no key %d (%s), rejected %d, most rejected %+v; want 4, 0, 2 and %s once",
					p.Requests, p.NoKey, p.NoKeyReason, p.Rejected, p.Top, tc.top)
			}
		})
	}
}
