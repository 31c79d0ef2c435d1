package replay

import (
	"os"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestCloudFrontLogBehindTrustedHops replays the sample CloudFront log
// under the configurations of an origin behind CloudFront. CloudFront
// forwards the X-Forwarded-For header a viewer sent (its x-forwarded-for
// field) with the viewer's address (c-ip) appended, so the middleware at
// the origin, trusting one hop, keys each request by c-ip. The replay read
// the x-forwarded-for field as the whole header: the requests without one
// (two of three) had no key, and the third was keyed by the address its
// viewer wrote in its own header (any client may send one).
func TestCloudFrontLogBehindTrustedHops(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"trusted hops", "trusted_hops: 1\n"},
		{"trusted proxies", "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n"},
		{"no proxy", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open("../logparse/testdata/cloudfront_w3c.log")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := logparse.NewReader(f, "cloudfront_w3c.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// One request per minute per address: 192.0.2.5's second
			// request is refused, 198.51.100.4's first is not.
			rep := replayEntries(t, tc.config+"policies:\n  - {name: ip, limit: 1, window: 1m}\n", Options{}, readEntries(t, r))
			p := rep.Policies[0]
			if p.Requests != 3 || p.NoKey != 0 || p.Rejected != 1 || len(p.Top) != 1 || p.Top[0].Key != "192.0.2.5" {
				t.Errorf("requests %d, no key %d (%s), rejected %d, most rejected %+v; want 3, 0, 1 and 192.0.2.5",
					p.Requests, p.NoKey, p.NoKeyReason, p.Rejected, p.Top)
			}
		})
	}
}
