package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_ConfigBoundsAreAccepted pins the valid ends of each configured
// range: TestIP_BadConfigFailsAtConstruction checks the values just past
// them.
func TestIP_ConfigBoundsAreAccepted(t *testing.T) {
	tests := []struct {
		name string
		opts []keyfunc.IPOption
	}{
		{"v6 prefix 1", []keyfunc.IPOption{keyfunc.IPv6Prefix(1)}},
		{"v6 prefix 128", []keyfunc.IPOption{keyfunc.IPv6Prefix(128)}},
		{"v4 prefix 1", []keyfunc.IPOption{keyfunc.IPv4Prefix(1)}},
		{"v4 prefix 32", []keyfunc.IPOption{keyfunc.IPv4Prefix(32)}},
		{"max hops 1", []keyfunc.IPOption{keyfunc.MaxHops(1)}},
		{"max hops 1024", []keyfunc.IPOption{keyfunc.MaxHops(1024)}},
		{"hops equal to max hops", []keyfunc.IPOption{keyfunc.TrustedHops(4), keyfunc.MaxHops(4)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := keyfunc.IP(tt.opts...); err != nil {
				t.Fatalf("IP(%s) error: %v; want it accepted", tt.name, err)
			}
		})
	}
}

// TestIP_UntrustedPeerBehindTrustedConfigAllocatesNothing: with trusted
// proxies configured, an IPv4 peer outside them is keyed by the host part
// of RemoteAddr as it stands, without allocating.
func TestIP_UntrustedPeerBehindTrustedConfigAllocatesNothing(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	r := newReq("192.0.2.1:1234", xff, "203.0.113.9")
	wantKey(t, f, r, "192.0.2.1", nil)
	if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got != 0 {
		t.Fatalf("IP(TrustedProxies) from an untrusted peer: %v allocations per request; want 0", got)
	}
}

// TestIP_FromHeaderEntryLength: an entry of the configured header is read
// up to maxEntryLen (512) bytes, white space included, and no further.
func TestIP_FromHeaderEntryLength(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader("X-Real-IP"))
	pad := func(n int) string { return "192.0.2.1" + strings.Repeat(" ", n-len("192.0.2.1")) }
	wantKey(t, f, newReq("10.0.0.1:1", "X-Real-IP", pad(512)), "192.0.2.1", nil)
	wantKey(t, f, newReq("10.0.0.1:1", "X-Real-IP", pad(513)), "", keyfunc.ErrNoClientIP)
}

// TestIP_XForwardedForEntryLength: an entry preceded by a comma is read up
// to maxEntryLen (512) bytes, white space included, and no further.
func TestIP_XForwardedForEntryLength(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedHops(1))
	pad := func(n int) string { return strings.Repeat(" ", n-len("192.0.2.1")) + "192.0.2.1" }
	wantKey(t, f, newReq("10.0.0.1:1", xff, "198.51.100.1,"+pad(512)), "192.0.2.1", nil)
	wantKey(t, f, newReq("10.0.0.1:1", xff, "198.51.100.1,"+pad(513)), "", keyfunc.ErrNoClientIP)
}

// TestIP_XForwardedForLoneEntryLength: an entry alone on its line is read
// up to maxEntryLen (512) bytes too, and no further. A 513-byte one was
// read: the walker's window (maxEntryLen+1, room for the comma) held it
// whole, and only a longer line was taken as overlong.
func TestIP_XForwardedForLoneEntryLength(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedHops(1))
	pad := func(n int) string { return strings.Repeat(" ", n-len("192.0.2.1")) + "192.0.2.1" }
	wantKey(t, f, newReq("10.0.0.1:1", xff, pad(512)), "192.0.2.1", nil)
	wantKey(t, f, newReq("10.0.0.1:1", xff, pad(513)), "", keyfunc.ErrNoClientIP)
}

// TestIP_EntryForms pins entries at the edges of what parses as an address.
func TestIP_EntryForms(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedHops(1))
	zoned := func(n int) string { return "fe80::1%" + strings.Repeat("a", n-len("fe80::1%")) }
	tests := []struct {
		name    string
		entry   string
		want    string
		wantErr error
	}{
		{name: "leading comma", entry: ",192.0.2.1", want: "192.0.2.1"},
		{name: "100 bytes", entry: zoned(100), want: "fe80::/64"},
		{name: "101 bytes", entry: zoned(101), wantErr: keyfunc.ErrNoClientIP},
		{name: "closing bracket only", entry: "x2001:db8::1]", wantErr: keyfunc.ErrNoClientIP},
		{name: "bracketed v4", entry: "[192.0.2.1]", wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq("10.0.0.1:1", xff, tt.entry), tt.want, tt.wantErr)
		})
	}
}

// TestIP_TrustedIPv6HostIsOneAddress: a /96 or longer IPv6 prefix that is
// not IPv4-mapped is kept as it is, not narrowed as a mapped one is.
func TestIP_TrustedIPv6HostIsOneAddress(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("2001:db8::1/128")...), keyfunc.IPv6Prefix(128))
	wantKey(t, f, newReq("[2001:db8::1]:1", xff, "203.0.113.9"), "203.0.113.9", nil)
	wantKey(t, f, newReq("[2001:db8::2]:1", xff, "203.0.113.9"), "2001:db8::2", nil)
}

// TestIP_ForwardedElementEdges pins what parseForwardedFor accepts at the
// edges of its grammar.
func TestIP_ForwardedElementEdges(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr error
	}{
		{name: "leading comma", value: ",for=203.0.113.5", want: "203.0.113.5"},
		{name: "obfuscated port of every class", value: `for="203.0.113.5:_azAZ09"`, want: "203.0.113.5"},
		{name: "token name of every class", value: "for=203.0.113.5;azAZ09=x", want: "203.0.113.5"},
		{name: "empty quoted value", value: `for=203.0.113.5;ext=""`, want: "203.0.113.5"},
		{name: "empty for", value: "for=", wantErr: keyfunc.ErrNoClientIP},
		{name: "backslash in another value", value: `for=203.0.113.5;ext=a\b`, wantErr: keyfunc.ErrNoClientIP},
		{name: "quote inside a quoted value", value: `for=203.0.113.5;ext=""a"`, wantErr: keyfunc.ErrNoClientIP},
		{name: "quote inside a token", value: `for=203.0.113.5;ext=a"b`, wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", tt.value), tt.want, tt.wantErr)
		})
	}
}

// TestIP_RemoteAddrObfuscatedPort: a middleware further out that copies a
// Forwarded for= node into RemoteAddr (gorilla's ProxyHeaders) leaves an
// obfuscated port there when the proxy hid the client's (RFC 7239 section
// 6.3): "[2001:db8::1]:_hidden", "192.0.2.7:_p". The client's address is
// read as from a real port; a node that is not an address with such a port
// still has no key.
func TestIP_RemoteAddrObfuscatedPort(t *testing.T) {
	f := mustIP(t, keyfunc.IPv6Prefix(128))
	wantKey(t, f, newReq("[2001:db8::1]:_hidden"), "2001:db8::1", nil)
	wantKey(t, f, newReq("192.0.2.7:_p.1-x"), "192.0.2.7", nil)
	wantKey(t, f, newReq("[::ffff:192.0.2.7]:_p"), "192.0.2.7", nil)
	for _, bad := range []string{"2001:db8::1:_p", "_hidden:_p", "192.0.2.7:_", "192.0.2.7:_a b", "[2001:db8::1]_p"} {
		wantKey(t, f, newReq(bad), "", keyfunc.ErrNoClientIP)
	}
	// Behind trusted proxies the rewritten peer is untrusted, and keyed.
	g := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	wantKey(t, g, newReq("192.0.2.7:_p", xff, "203.0.113.9"), "192.0.2.7", nil)
}
