package keyfunc_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// sharesMemory reports whether key's bytes lie inside s's: a key that is a
// substring of s keeps all of s alive for as long as the key is kept.
func sharesMemory(key, s string) bool {
	if key == "" || s == "" {
		return false
	}
	k := uintptr(unsafe.Pointer(unsafe.StringData(key)))
	b := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return k >= b && k < b+uintptr(len(s))
}

// TestIP_KeyNeverPinsALongRemoteAddr: IP's doc says a key never pins a
// large header, and reuses RemoteAddr's text only as "a short string
// net/http built". A middleware further out that copies a forwarding
// header into RemoteAddr (as gorilla's ProxyHeaders does with a for=
// node) hands IP a RemoteAddr of the client's making, as long as the
// header limit allows: here a valid
// address with a megabyte of zero padding before its port, or a megabyte
// of obfuscated port (RFC 7239 6.3), both of which IP accepts. The key,
// "192.0.2.1", must be its own 9 bytes and not a window onto that
// megabyte: kept in a store (a map of keys, a cache), every such key would
// hold a megabyte, and a client rotating addresses through such a
// middleware would multiply the store's memory by 100,000.
func TestIP_KeyNeverPinsALongRemoteAddr(t *testing.T) {
	funcs := map[string]keyfunc.Func{
		"RemoteAddr":                   mustIP(t),
		"untrusted peer, trusted /8":   mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)),
		"untrusted peer, X-Real-IP":    mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader("X-Real-IP")),
		"untrusted peer, Forwarded":    mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded()),
		"RemoteAddr, IPv6 grouped /48": mustIP(t, keyfunc.IPv6Prefix(48)),
	}
	remoteAddrs := map[string]string{
		"zero-padded port": "192.0.2.1:" + strings.Repeat("0", 1<<20) + "80",
		"obfuscated port":  "192.0.2.1:_" + strings.Repeat("p", 1<<20),
	}
	for fname, f := range funcs {
		for rname, ra := range remoteAddrs {
			t.Run(fname+"/"+rname, func(t *testing.T) {
				r := newReq(ra)
				key, err := f(r)
				if err != nil || key != "192.0.2.1" {
					t.Fatalf("key = %q, %v; want %q", key, err, "192.0.2.1")
				}
				if sharesMemory(key, r.RemoteAddr) {
					t.Fatalf("key %q is a substring of the %d-byte RemoteAddr: it pins all of it", key, len(r.RemoteAddr))
				}
			})
		}
	}
}

// TestIP_RemoteAddrReusedOnlyWithAShortPort pins the bound of that reuse:
// a RemoteAddr with a port of five digits, the longest net/http writes, is
// still keyed without allocating (the general path, as for a peer outside
// the trusted proxies), and one port character more is copied.
func TestIP_RemoteAddrReusedOnlyWithAShortPort(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	r := newReq("192.0.2.1:65535")
	wantKey(t, f, r, "192.0.2.1", nil)
	if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got != 0 {
		t.Fatalf("RemoteAddr %q: %v allocations; want 0 (the key is its substring)", r.RemoteAddr, got)
	}
	r = newReq("192.0.2.1:065535")
	key, err := f(r)
	if err != nil || key != "192.0.2.1" || sharesMemory(key, r.RemoteAddr) {
		t.Fatalf("RemoteAddr %q: key %q, %v, substring %v; want %q, nil, false", r.RemoteAddr, key, err, sharesMemory(key, r.RemoteAddr), "192.0.2.1")
	}
}
