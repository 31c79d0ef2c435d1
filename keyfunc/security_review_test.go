package keyfunc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_EmbeddedIPv4NotationIsStillIPv6 is express-rate-limit 8.6.2's
// case: 2001:db8::1.2.3.4 is written with a dotted tail but is an IPv6
// address (not v4-mapped); it must be grouped by its /64, never keyed as
// the IPv4 address 1.2.3.4 (which would let an IPv6 client pick the bucket
// of an IPv4 victim, and rotate its tail for fresh buckets).
func TestIP_EmbeddedIPv4NotationIsStillIPv6(t *testing.T) {
	direct := mustIP(t)
	proxied := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	fwd := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	wantKey(t, direct, newReq("[2001:db8::1.2.3.4]:80"), "2001:db8::/64", nil)
	wantKey(t, direct, newReq("[2001:db8::5.6.7.8]:80"), "2001:db8::/64", nil)
	wantKey(t, proxied, newReq("10.0.0.1:80", xff, "2001:db8::1.2.3.4"), "2001:db8::/64", nil)
	wantKey(t, fwd, newReq("10.0.0.1:80", "Forwarded", `for="[2001:db8::1.2.3.4]:4711"`), "2001:db8::/64", nil)
	// The mapped form is the IPv4 client, whichever notation it came in.
	wantKey(t, direct, newReq("[::ffff:102:304]:80"), "1.2.3.4", nil)
	wantKey(t, proxied, newReq("10.0.0.1:80", xff, "::ffff:102:304"), "1.2.3.4", nil)
}

// TestIP_ZonesDoNotMakeNewKeys: an IPv6 zone identifier is local to the
// host that wrote it; a client varying it in a trusted header, or a peer
// seen on two interfaces, must not get a new bucket per zone.
func TestIP_ZonesDoNotMakeNewKeys(t *testing.T) {
	direct := mustIP(t, keyfunc.IPv6Prefix(128))
	proxied := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.IPv6Prefix(128))
	for _, z := range []string{"", "%eth0", "%1", "%25x"} {
		wantKey(t, direct, newReq("[fe80::1"+z+"]:80"), "fe80::1", nil)
		wantKey(t, proxied, newReq("10.0.0.1:80", xff, "[2001:db8::9"+z+"]:80"), "2001:db8::9", nil)
	}
}

// TestIP_UntrustedPeerCannotChooseItsKeyByAnyHeader: a client connecting
// directly sends every forwarding header a limiter might read, each naming
// a victim; whichever source is configured, its key stays its own address.
func TestIP_UntrustedPeerCannotChooseItsKeyByAnyHeader(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	funcs := map[string]keyfunc.Func{
		"default":          mustIP(t),
		"X-Forwarded-For":  mustIP(t, trusted),
		"Forwarded":        mustIP(t, trusted, keyfunc.FromForwarded()),
		"X-Real-IP":        mustIP(t, trusted, keyfunc.FromHeader("X-Real-IP")),
		"True-Client-IP":   mustIP(t, trusted, keyfunc.FromHeader("True-Client-IP")),
		"CF-Connecting-IP": mustIP(t, trusted, keyfunc.FromHeader("CF-Connecting-IP")),
	}
	spoof := []string{
		xff, "192.0.2.66", "X-Real-IP", "192.0.2.66", "True-Client-IP", "192.0.2.66",
		"CF-Connecting-IP", "192.0.2.66", "Forwarded", "for=192.0.2.66",
		"X-Client-IP", "192.0.2.66",
	}
	for name, f := range funcs {
		t.Run(name, func(t *testing.T) {
			wantKey(t, f, newReq("198.51.100.7:4242", spoof...), "198.51.100.7", nil)
		})
	}
}

// TestIP_SeveralHeaderLinesBehindAProxy: a client sends its own
// X-Forwarded-For lines naming a victim, and the trusted proxy adds one
// line with the address it saw (some proxies add a line rather than
// append to the last). The lines are one list walked from the right: the
// client is the proxy's entry, not any of its own, and not the first line.
func TestIP_SeveralHeaderLinesBehindAProxy(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	wantKey(t, f, newReq("10.0.0.1:80", xff, "192.0.2.66", xff, "192.0.2.67, 192.0.2.68", xff, "203.0.113.9"), "203.0.113.9", nil)
	// The same with Forwarded, and a client's unbalanced quote in its own
	// line that must not swallow the proxy's element.
	g := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	wantKey(t, g, newReq("10.0.0.1:80", "Forwarded", `for="192.0.2.66`, "Forwarded", "for=203.0.113.9;proto=https"), "203.0.113.9", nil)
	wantKey(t, g, newReq("10.0.0.1:80", "Forwarded", `for="192.0.2.66, for=203.0.113.9`), "203.0.113.9", nil)
}

// TestIP_HostileValuesAreRefused: overlong, non-UTF-8, control-character
// or otherwise non-address values in the trusted header yield an error
// (never a key made of the client's bytes, never a shared bucket).
func TestIP_HostileValuesAreRefused(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	h := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader("X-Real-IP"))
	for _, v := range []string{
		strings.Repeat("1", 1<<20),
		"192.0.2.1" + strings.Repeat(" ", 1<<16),
		"\xff\xfe192.0.2.1",
		"192.0.2.1\x00",
		"192.0.2.1\r\nX-Evil: 1",
		"192.0.2.1%eth0",
		"unknown",
		"_hidden",
		"",
	} {
		for name, g := range map[string]keyfunc.Func{"xff": f, "x-real-ip": h} {
			r := newReq("10.0.0.1:80")
			r.Header[http.CanonicalHeaderKey(map[string]string{"xff": xff, "x-real-ip": "X-Real-IP"}[name])] = []string{v}
			got, err := g(r)
			if err == nil {
				t.Errorf("%s %.40q: key %q, nil error; want ErrNoClientIP", name, v, got)
			}
		}
	}
}
