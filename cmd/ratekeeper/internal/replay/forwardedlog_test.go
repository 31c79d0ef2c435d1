package replay

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestForwardedForLog replays Apache's proxy setup, whose log starts with
// the X-Forwarded-For header ("%{X-Forwarded-For}i %l %u %t ..."), under
// the ways a configuration names the client: the client is the one the
// middleware behind that proxy would have found. Two clients each send two
// requests, one of them also naming a spoofed address at the left of the
// list; a limit of 2 per minute per IP rejects nothing when the client is
// found, and rejects the second client's requests when every request is
// keyed on one address.
func TestForwardedForLog(t *testing.T) {
	const log = `203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5
198.51.100.1, 203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 5
203.0.113.8, 10.0.0.2 - - [10/Mar/2024:12:00:02 +0000] "GET / HTTP/1.1" 200 5
198.51.100.2, 203.0.113.8, 10.0.0.2 - - [10/Mar/2024:12:00:03 +0000] "GET / HTTP/1.1" 200 5
`
	const policy = "policies:\n  - {name: ip, limit: 2, window: 1m}\n"
	for _, tc := range []struct {
		name, config string
		rejected     int64
		top          string
	}{
		// The proxy 10.0.0.2 is trusted: the client is the
		// first address from the right that is not theirs.
		{"trusted proxies", "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n" + policy, 0, ""},
		// Two proxies in front (the load balancer, then 10.0.0.2): the
		// client is the second entry from the right.
		{"trusted hops", "trusted_hops: 2\n" + policy, 0, ""},
		// One hop trusted: the client is the proxy, for every request.
		{"one hop of two", "trusted_hops: 1\n" + policy, 2, "10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := logparse.NewReader(strings.NewReader(log), "xff.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries := readEntries(t, r)
			if n := len(entries); n != 4 {
				t.Fatalf("%d entries, want 4 (malformed %v)", n, r.Samples())
			}
			rep := replayEntries(t, tc.config, Options{}, entries)
			p := rep.Policies[0]
			if p.NoKey != 0 || p.Rejected != tc.rejected {
				t.Errorf("no key %d (%s), rejected %d; want 0 and %d", p.NoKey, p.NoKeyReason, p.Rejected, tc.rejected)
			}
			if tc.top != "" && (len(p.Top) == 0 || p.Top[0].Key != tc.top) {
				t.Errorf("most rejected keys %+v, want %s first", p.Top, tc.top)
			}
		})
	}
}
