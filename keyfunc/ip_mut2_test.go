package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_IPv4PrefixZeroIsRefused: a /0 would give every IPv4 client the
// one key "0.0.0.0/0", a silent shared bucket; IPv4Prefix must be within
// 1..32.
func TestIP_IPv4PrefixZeroIsRefused(t *testing.T) {
	f, err := keyfunc.IP(keyfunc.IPv4Prefix(0))
	wantRefused(t, "IP(IPv4Prefix(0))", f, err, "keyfunc: IP: IPv4Prefix 0 is outside 1..32")
}

// TestIP_DefaultMaxHopsIs32: by default the walk examines 32 entries, by
// literal count: a client behind 31 trusted hops is found, one behind 32 is
// not.
func TestIP_DefaultMaxHopsIs32(t *testing.T) {
	if keyfunc.DefaultMaxHops != 32 {
		t.Fatalf("DefaultMaxHops = %d; want 32", keyfunc.DefaultMaxHops)
	}
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	hops := func(n int) string { return "203.0.113.5" + strings.Repeat(", 10.0.0.9", n) }
	wantKey(t, f, newReq("10.0.0.1:80", xff, hops(31)), "203.0.113.5", nil)
	wantKey(t, f, newReq("10.0.0.1:80", xff, hops(32)), "", keyfunc.ErrNoClientIP)
}

// TestIP_MaxHopsAbove1024IsRefused: MaxHops must be within 1..1024.
func TestIP_MaxHopsAbove1024IsRefused(t *testing.T) {
	f, err := keyfunc.IP(keyfunc.MaxHops(1025))
	wantRefused(t, "IP(MaxHops(1025))", f, err, "keyfunc: IP: MaxHops 1025 is outside 1..1024")
}

// TestIP_IPv4PrefixJustUnder32GroupsCanonicalRemoteAddr: the canonical
// "a.b.c.d:port" RemoteAddr is keyed as it stands only at /32; at /31 it
// is grouped like any other address.
func TestIP_IPv4PrefixJustUnder32GroupsCanonicalRemoteAddr(t *testing.T) {
	f := mustIP(t, keyfunc.IPv4Prefix(31))
	wantKey(t, f, newReq("192.0.2.1:80"), "192.0.2.0/31", nil)
	wantKey(t, f, newReq("192.0.2.2:80"), "192.0.2.2/31", nil)
}

// TestIP_WellKnownNAT64PrefixNeedsEveryMiddleByteZero: only 64:ff9b::/96
// carries an IPv4 address; an address that differs from it in any one of
// bytes 4 to 11 (64:ff9b:1::/48, the local-use prefix, among them) is an
// IPv6 client, keyed as such (here at /128, the address itself).
func TestIP_WellKnownNAT64PrefixNeedsEveryMiddleByteZero(t *testing.T) {
	f := mustIP(t, keyfunc.IPv6Prefix(128))
	for _, a := range []string{
		"64:ff9b:100::102:304",   // byte 4
		"64:ff9b:1::102:304",     // byte 5
		"64:ff9b:0:100::102:304", // byte 6
		"64:ff9b:0:1::102:304",   // byte 7
		"64:ff9b::100:0:102:304", // byte 8
		"64:ff9b::1:0:102:304",   // byte 9
		"64:ff9b::100:102:304",   // byte 10
		"64:ff9b::1:102:304",     // byte 11
	} {
		wantKey(t, f, newReq("["+a+"]:443"), a, nil)
	}
	wantKey(t, f, newReq("[64:ff9b::102:304]:443"), "1.2.3.4", nil)
}
