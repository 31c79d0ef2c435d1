package keyfunc_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestFromHeaderRefusesListHeaders guards a new user's mistake:
// FromHeader("X-Forwarded-For") (or "Forwarded") reads a list header as a
// single address. It worked while the header held one entry and answered
// every request whose chain had two (a client's own entry, or a second
// proxy) with ErrNoClientIP, a 400 for that client; a Forwarded value
// (for=...) never parsed at all. IP refuses it, naming the option to use.
func TestFromHeaderRefusesListHeaders(t *testing.T) {
	proxies := keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))
	for _, tc := range []struct{ header, want string }{
		{"X-Forwarded-For", "FromXForwardedFor"},
		{"x-forwarded-for", "FromXForwardedFor"},
		{"Forwarded", "FromForwarded"},
		{"FORWARDED", "FromForwarded"},
	} {
		_, err := keyfunc.IP(proxies, keyfunc.FromHeader(tc.header))
		if err == nil {
			t.Errorf("IP(TrustedProxies(10.0.0.0/8), FromHeader(%q)) = nil error, want one naming %s", tc.header, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), "FromHeader") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("IP(TrustedProxies(10.0.0.0/8), FromHeader(%q)) error %q, want it to name FromHeader and %s", tc.header, err, tc.want)
		}
	}
	// Single-value headers stay accepted.
	for _, h := range []string{"X-Real-IP", "CF-Connecting-IP", "True-Client-IP", "X-Forwarded-For-Real"} {
		if _, err := keyfunc.IP(proxies, keyfunc.FromHeader(h)); err != nil {
			t.Errorf("IP(TrustedProxies(10.0.0.0/8), FromHeader(%q)) = %v, want nil", h, err)
		}
	}
}
