package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_TrustOptionGivenTwiceIsRefused: options assembled from two places
// (a CDN's ranges, then the load balancer's) each declaring proxies must
// not silently keep only the last declaration. With the last one kept, the
// proxies of the first are no longer trusted: behind the CDN, every client
// of an edge node got that node's key, and with the prefixes the other way
// round every client got the load balancer's, one bucket for all.
func TestIP_TrustOptionGivenTwiceIsRefused(t *testing.T) {
	cdn := keyfunc.TrustedProxies(prefixes("198.51.100.0/24")...)
	lb := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	for _, tc := range []struct {
		name string
		opts []keyfunc.IPOption
		msg  string
	}{
		{"TrustedProxies twice", []keyfunc.IPOption{cdn, lb}, "TrustedProxies given more than once"},
		{"TrustedHops twice", []keyfunc.IPOption{keyfunc.TrustedHops(2), keyfunc.TrustedHops(1)}, "TrustedHops given more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := keyfunc.IP(tc.opts...)
			if f != nil || err == nil || !strings.Contains(err.Error(), tc.msg) {
				var key string
				if f != nil {
					key, _ = f(newReq("10.0.0.1:80", xff, "203.0.113.9, 198.51.100.7"))
				}
				t.Fatalf("IP(%s) = Func %v (key of client 203.0.113.9 behind the CDN 198.51.100.7 and the LB 10.0.0.1: %q), error %v; want nil and an error saying %q",
					tc.name, f != nil, key, err, tc.msg)
			}
		})
	}
}
