package keyfunc_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

const xff = "X-Forwarded-For"

func TestIP_RemoteAddr(t *testing.T) {
	f := mustIP(t)
	tests := []struct {
		name       string
		remoteAddr string
		headers    []string
		want       string
		wantErr    error
	}{
		// Well-formed peers.
		{name: "v4 with port", remoteAddr: "192.0.2.1:1234", want: "192.0.2.1"},
		{name: "v4 bare", remoteAddr: "192.0.2.1", want: "192.0.2.1"},
		{name: "v6 with port", remoteAddr: "[2001:db8:1:2::7]:443", want: "2001:db8:1:2::/64"},
		{name: "v6 bare", remoteAddr: "2001:db8:1:2::7", want: "2001:db8:1:2::/64"},
		{name: "v6 zone stripped", remoteAddr: "[fe80::1%eth0]:80", want: "fe80::/64"},
		{name: "v4-mapped unmapped", remoteAddr: "[::ffff:192.0.2.1]:80", want: "192.0.2.1"},
		{name: "loopback v6", remoteAddr: "[::1]:80", want: "::/64"},

		// Headers are never read without trusted proxies.
		{name: "XFF ignored", remoteAddr: "192.0.2.1:1", headers: []string{xff, "203.0.113.9"}, want: "192.0.2.1"},
		{name: "X-Real-IP ignored", remoteAddr: "192.0.2.1:1", headers: []string{"X-Real-IP", "203.0.113.9"}, want: "192.0.2.1"},
		{name: "Forwarded ignored", remoteAddr: "192.0.2.1:1", headers: []string{"Forwarded", "for=203.0.113.9"}, want: "192.0.2.1"},

		// Unparseable peers are errors, never a shared key.
		{name: "empty", remoteAddr: "", wantErr: keyfunc.ErrNoClientIP},
		{name: "hostname", remoteAddr: "example.com:80", wantErr: keyfunc.ErrNoClientIP},
		{name: "unix socket", remoteAddr: "@", wantErr: keyfunc.ErrNoClientIP},
		{name: "bad port", remoteAddr: "192.0.2.1:99999", wantErr: keyfunc.ErrNoClientIP},
		{name: "port only", remoteAddr: ":80", wantErr: keyfunc.ErrNoClientIP},
		{name: "v6 unbracketed port", remoteAddr: "2001:db8::1:80:x", wantErr: keyfunc.ErrNoClientIP},
		{name: "huge", remoteAddr: strings.Repeat("1", 1<<16), wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq(tt.remoteAddr, tt.headers...), tt.want, tt.wantErr)
		})
	}
}

func TestIP_SpoofedXForwardedForFromUntrustedPeerIsIgnored(t *testing.T) {
	for _, src := range []struct {
		name   string
		opt    keyfunc.IPOption
		header string
		value  string
	}{
		{"X-Forwarded-For", keyfunc.FromXForwardedFor(), xff, "1.1.1.1"},
		{"Forwarded", keyfunc.FromForwarded(), "Forwarded", "for=1.1.1.1"},
		{"X-Real-IP", keyfunc.FromHeader("X-Real-IP"), "X-Real-IP", "1.1.1.1"},
	} {
		t.Run(src.name, func(t *testing.T) {
			f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), src.opt)
			// The attacker talks to the server directly and claims to be 1.1.1.1.
			wantKey(t, f, newReq("198.51.100.7:5555", src.header, src.value), "198.51.100.7", nil)
			// Rotating the claim does not rotate the key.
			wantKey(t, f, newReq("198.51.100.7:5555", src.header, "2.2.2.2"), "198.51.100.7", nil)
		})
	}
}

func TestIP_TrustedChainWithForgedLeftmostYieldsRealClient(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	// The client sent "X-Forwarded-For: 6.6.6.6"; the edge proxy appended the
	// client's real address, the inner proxy the edge's.
	r := newReq("10.0.0.1:80", xff, "6.6.6.6, 203.0.113.5, 10.0.0.2")
	wantKey(t, f, r, "203.0.113.5", nil)
}

func TestIP_TrustedProxies(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8", "2001:db8:ffff::/48")...))
	many := strings.Repeat("10.0.0.9, ", 40)
	tests := []struct {
		name       string
		remoteAddr string
		headers    []string
		want       string
		wantErr    error
	}{
		// Walking the chain.
		{name: "one hop", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5"}, want: "203.0.113.5"},
		{name: "skip trusted hops", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, 10.1.1.1, 10.2.2.2"}, want: "203.0.113.5"},
		{name: "lines merged", remoteAddr: "10.0.0.1:80", headers: []string{xff, "6.6.6.6", xff, "203.0.113.5, 10.0.0.2"}, want: "203.0.113.5"},
		{name: "rightmost untrusted wins", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "garbage left of client ignored", remoteAddr: "10.0.0.1:80", headers: []string{xff, "not-an-ip, 203.0.113.5"}, want: "203.0.113.5"},
		{name: "entry with port", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5:4711"}, want: "203.0.113.5"},
		{name: "v6 entry bracketed with port", remoteAddr: "10.0.0.1:80", headers: []string{xff, "[2001:db8:5::1]:443"}, want: "2001:db8:5::/64"},
		{name: "v6 entry bracketed", remoteAddr: "10.0.0.1:80", headers: []string{xff, "[2001:db8:5::1]"}, want: "2001:db8:5::/64"},
		{name: "v6 entry zone stripped", remoteAddr: "10.0.0.1:80", headers: []string{xff, "fe80::1%eth0"}, want: "fe80::/64"},
		{name: "mapped entry unmapped", remoteAddr: "10.0.0.1:80", headers: []string{xff, "::ffff:203.0.113.5"}, want: "203.0.113.5"},
		{name: "mapped trusted hop skipped", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, ::ffff:10.0.0.2"}, want: "203.0.113.5"},
		{name: "mapped peer trusted", remoteAddr: "[::ffff:10.0.0.1]:80", headers: []string{xff, "203.0.113.5"}, want: "203.0.113.5"},
		{name: "v6 trusted peer", remoteAddr: "[2001:db8:ffff::1]:80", headers: []string{xff, "203.0.113.5"}, want: "203.0.113.5"},
		{name: "empty line between", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5", xff, "", xff, "10.0.0.2"}, want: "203.0.113.5"},
		{name: "overlong garbage left of client", remoteAddr: "10.0.0.1:80", headers: []string{xff, strings.Repeat("x", 600) + ", 203.0.113.5"}, want: "203.0.113.5"},
		{name: "overlong entry before client", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, " + strings.Repeat("1", 600) + ", 10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "overlong entry hides a valid tail", remoteAddr: "10.0.0.1:80", headers: []string{xff, strings.Repeat("1", 600) + "203.0.113.5"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "tabs and spaces", remoteAddr: "10.0.0.1:80", headers: []string{xff, "\t203.0.113.5 ,\t10.0.0.2 "}, want: "203.0.113.5"},
		{name: "forty hops stop at MaxHops", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, " + many + "10.0.0.9"}, wantErr: keyfunc.ErrNoClientIP},

		// Failing closed.
		{name: "no header", remoteAddr: "10.0.0.1:80", wantErr: keyfunc.ErrNoClientIP},
		{name: "blank header", remoteAddr: "10.0.0.1:80", headers: []string{xff, " "}, wantErr: keyfunc.ErrNoClientIP},
		{name: "all trusted", remoteAddr: "10.0.0.1:80", headers: []string{xff, "10.0.0.3, 10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "garbage before client", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, garbage, 10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "empty entry before client", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5, , 10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "trailing comma", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5,"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "hostname entry", remoteAddr: "10.0.0.1:80", headers: []string{xff, "evil.example"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "huge entry", remoteAddr: "10.0.0.1:80", headers: []string{xff, strings.Repeat("9", 1<<16)}, wantErr: keyfunc.ErrNoClientIP},
		{name: "bad peer", remoteAddr: "nope", headers: []string{xff, "203.0.113.5"}, wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq(tt.remoteAddr, tt.headers...), tt.want, tt.wantErr)
		})
	}
}

func TestIP_MaxHops(t *testing.T) {
	chain := "203.0.113.5, " + strings.Repeat("10.0.0.9, ", 39) + "10.0.0.9" // 41 entries
	r := newReq("10.0.0.1:80", xff, chain)
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	wantKey(t, mustIP(t, trusted), r, "", keyfunc.ErrNoClientIP)
	wantKey(t, mustIP(t, trusted, keyfunc.MaxHops(40)), r, "", keyfunc.ErrNoClientIP)
	wantKey(t, mustIP(t, trusted, keyfunc.MaxHops(41)), r, "203.0.113.5", nil)
}

// TestIP_BlankHeaderLinesCountTowardMaxHops guards the bound on work
// against a flood of empty X-Forwarded-For lines (net/http keeps each as an
// empty value): they are skipped, but each counts as a step toward MaxHops,
// so a hostile header cannot make the walk scan thousands of lines.
func TestIP_BlankHeaderLinesCountTowardMaxHops(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	chain := []string{xff, "203.0.113.5"}
	for range 40 {
		chain = append(chain, xff, "")
	}
	chain = append(chain, xff, "10.0.0.2")
	wantKey(t, mustIP(t, trusted, keyfunc.MaxHops(64)), newReq("10.0.0.1:80", chain...), "203.0.113.5", nil)

	f := mustIP(t, trusted)
	r := newReq("10.0.0.1:80", chain...)
	_, err := f(r)
	wantKey(t, f, r, "", keyfunc.ErrNoClientIP)
	if !strings.Contains(err.Error(), "MaxHops") {
		t.Fatalf("42 lines, 40 of them blank: error %q; want the MaxHops one", err)
	}

	flood := newReq("10.0.0.1:80")
	flood.Header[xff] = make([]string, 100000)
	_, err = f(flood)
	if !errors.Is(err, keyfunc.ErrNoClientIP) || !strings.Contains(err.Error(), "MaxHops") {
		t.Fatalf("100000 blank lines: error %v; want the MaxHops one", err)
	}
}

func TestIP_TrustedPrefixInMappedForm(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("::ffff:10.0.0.0/104")...))
	wantKey(t, f, newReq("10.0.0.1:80", xff, "203.0.113.5"), "203.0.113.5", nil)
	wantKey(t, f, newReq("11.0.0.1:80", xff, "203.0.113.5"), "11.0.0.1", nil)
}

func TestIP_TrustedHops(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedHops(2))
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr error
	}{
		{name: "exact chain", value: "203.0.113.5, 10.0.0.2", want: "203.0.113.5"},
		{name: "forged leftmost", value: "6.6.6.6, 203.0.113.5, 10.0.0.2", want: "203.0.113.5"},
		{name: "garbage left of client", value: "garbage, 203.0.113.5, 10.0.0.2", want: "203.0.113.5"},
		{name: "short chain", value: "10.0.0.2", wantErr: keyfunc.ErrNoClientIP},
		{name: "bad client entry", value: "x, 10.0.0.2", wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq("192.0.2.200:80", xff, tt.value), tt.want, tt.wantErr)
		})
	}
	t.Run("no header", func(t *testing.T) {
		wantKey(t, f, newReq("192.0.2.200:80"), "", keyfunc.ErrNoClientIP)
	})
}

func TestIP_Forwarded(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	const fwd = "Forwarded"
	tests := []struct {
		name    string
		headers []string
		want    string
		wantErr error
	}{
		// RFC 7239 section 4 and 7.4 forms.
		{name: "plain", headers: []string{fwd, "for=203.0.113.5"}, want: "203.0.113.5"},
		{name: "with params", headers: []string{fwd, "for=203.0.113.5;proto=https;by=10.0.0.1"}, want: "203.0.113.5"},
		{name: "name case", headers: []string{fwd, "For=203.0.113.5"}, want: "203.0.113.5"},
		{name: "quoted v4 with port", headers: []string{fwd, `for="203.0.113.5:4711"`}, want: "203.0.113.5"},
		{name: "quoted v6 with port", headers: []string{fwd, `for="[2001:db8:cafe::17]:4711"`}, want: "2001:db8:cafe::/64"},
		{name: "quoted v6", headers: []string{fwd, `for="[2001:db8:cafe::17]"`}, want: "2001:db8:cafe::/64"},
		{name: "forged leftmost", headers: []string{fwd, "for=6.6.6.6, for=203.0.113.5, for=10.0.0.2;by=10.0.0.1"}, want: "203.0.113.5"},
		{name: "lines merged", headers: []string{fwd, "for=6.6.6.6", fwd, "for=203.0.113.5, for=10.0.0.2"}, want: "203.0.113.5"},
		{name: "spaces around pairs", headers: []string{fwd, "for=203.0.113.5 ; proto=http"}, want: "203.0.113.5"},
		{name: "empty pairs", headers: []string{fwd, ";for=203.0.113.5;;proto=http;"}, want: "203.0.113.5"},
		{name: "obfuscated port v4", headers: []string{fwd, `for="203.0.113.5:_abc"`}, want: "203.0.113.5"},
		{name: "obfuscated port v6", headers: []string{fwd, `for="[2001:db8:cafe::17]:_x-1.y_z"`}, want: "2001:db8:cafe::/64"},
		{name: "obfuscated port on a trusted hop", headers: []string{fwd, `for=203.0.113.5, for="10.0.0.2:_p"`}, want: "203.0.113.5"},
		{name: "comma inside another quoted value", headers: []string{fwd, `for=203.0.113.5;ext="a, b"`}, want: "203.0.113.5"},
		{name: "forged element inside a quoted value", headers: []string{fwd, `for=6.6.6.6, for="203.0.113.5";ext="x, for=10.0.0.9"`}, want: "203.0.113.5"},
		{name: "semicolon inside a quoted value", headers: []string{fwd, `for="203.0.113.5";ext="a;for=10.0.0.9"`}, want: "203.0.113.5"},
		{name: "client's unbalanced quote left of the client", headers: []string{fwd, `for="6.6.6.6, for=203.0.113.5`}, want: "203.0.113.5"},

		// Failing closed.
		{name: "XFF not read", headers: []string{xff, "203.0.113.5"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "unknown", headers: []string{fwd, "for=unknown"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "obfuscated", headers: []string{fwd, "for=_hidden"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "no for", headers: []string{fwd, "proto=https;by=10.0.0.1"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "two for", headers: []string{fwd, "for=203.0.113.5;for=203.0.113.6"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "unbalanced quote", headers: []string{fwd, `for="203.0.113.5`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "escape in quotes", headers: []string{fwd, `for="203.0.113.\5"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "pair without value", headers: []string{fwd, "for"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "comma inside quotes", headers: []string{fwd, `for="203.0.113.5, 10.0.0.2"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "escaped quote before a comma", headers: []string{fwd, `for=203.0.113.5;ext="a\",for=10.0.0.9"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "unbalanced quote in a trusted element", headers: []string{fwd, `for=203.0.113.5;ext="a, for=10.0.0.9`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "quote in a parameter name", headers: []string{fwd, `for=203.0.113.5;x"=1`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "empty obfuscated port", headers: []string{fwd, `for="203.0.113.5:_"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "bad obfuscated port", headers: []string{fwd, `for="203.0.113.5:_a b"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "obfuscated port on unbracketed v6", headers: []string{fwd, `for="2001:db8::1:_p"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "obfuscated node with obfuscated port", headers: []string{fwd, `for="_hidden:_p"`}, wantErr: keyfunc.ErrNoClientIP},
		{name: "all trusted", headers: []string{fwd, "for=10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq("10.0.0.1:80", tt.headers...), tt.want, tt.wantErr)
		})
	}
}

func TestIP_FromHeader(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader("cf-connecting-ip"))
	const h = "CF-Connecting-IP"
	tests := []struct {
		name       string
		remoteAddr string
		headers    []string
		want       string
		wantErr    error
	}{
		{name: "trusted peer", remoteAddr: "10.0.0.1:80", headers: []string{h, "203.0.113.5"}, want: "203.0.113.5"},
		{name: "untrusted peer", remoteAddr: "198.51.100.7:80", headers: []string{h, "203.0.113.5"}, want: "198.51.100.7"},
		{name: "last value wins", remoteAddr: "10.0.0.1:80", headers: []string{h, "6.6.6.6", h, "203.0.113.5"}, want: "203.0.113.5"},
		{name: "v6 grouped", remoteAddr: "10.0.0.1:80", headers: []string{h, "2001:db8:7:8::1"}, want: "2001:db8:7:8::/64"},
		{name: "missing", remoteAddr: "10.0.0.1:80", wantErr: keyfunc.ErrNoClientIP},
		{name: "bad last value, no fallback to earlier", remoteAddr: "10.0.0.1:80", headers: []string{h, "203.0.113.5", h, "bogus"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "list is not an address", remoteAddr: "10.0.0.1:80", headers: []string{h, "203.0.113.5, 10.0.0.2"}, wantErr: keyfunc.ErrNoClientIP},
		{name: "XFF not read", remoteAddr: "10.0.0.1:80", headers: []string{xff, "203.0.113.5"}, wantErr: keyfunc.ErrNoClientIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, f, newReq(tt.remoteAddr, tt.headers...), tt.want, tt.wantErr)
		})
	}
}

func TestIP_AddressesInOneIPv6Slash64ShareAKey(t *testing.T) {
	f := mustIP(t)
	a, errA := f(newReq("[2001:db8:aa:bb::1]:1"))
	b, errB := f(newReq("[2001:db8:aa:bb:ffff:ffff:ffff:fffe]:2"))
	if errA != nil || errB != nil || a != b {
		t.Fatalf("keys in one /64 = %q (%v), %q (%v); want equal", a, errA, b, errB)
	}
}

func TestIP_TwoIPv6Slash64sDoNotShareAKey(t *testing.T) {
	f := mustIP(t)
	a, errA := f(newReq("[2001:db8:aa:bb::1]:1"))
	b, errB := f(newReq("[2001:db8:aa:bc::1]:1"))
	if errA != nil || errB != nil || a == b {
		t.Fatalf("keys in adjacent /64s = %q (%v), %q (%v); want different", a, errA, b, errB)
	}
}

// TestIP_IPv4MappedAddressesGetDifferentKeys guards against the bug of
// tollbooth and httprate's CanonicalizeIP: masking ::ffff:a.b.c.d to a /64
// without unmapping it first puts every IPv4 client in the bucket "::".
func TestIP_IPv4MappedAddressesGetDifferentKeys(t *testing.T) {
	for _, src := range []struct {
		name string
		f    keyfunc.Func
		req  func(addr string) string // RemoteAddr for a client at addr
		hdr  func(addr string) []string
	}{
		{name: "RemoteAddr", f: mustIP(t), req: func(a string) string { return "[" + a + "]:80" }},
		{
			name: "X-Forwarded-For",
			f:    mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)),
			req:  func(string) string { return "10.0.0.1:80" },
			hdr:  func(a string) []string { return []string{xff, a} },
		},
	} {
		t.Run(src.name, func(t *testing.T) {
			var h1, h2 []string
			if src.hdr != nil {
				h1, h2 = src.hdr("::ffff:1.2.3.4"), src.hdr("::ffff:5.6.7.8")
			}
			a, errA := src.f(newReq(src.req("::ffff:1.2.3.4"), h1...))
			b, errB := src.f(newReq(src.req("::ffff:5.6.7.8"), h2...))
			if errA != nil || errB != nil || a == b {
				t.Fatalf("keys = %q (%v), %q (%v); want different", a, errA, b, errB)
			}
			if a != "1.2.3.4" || b != "5.6.7.8" {
				t.Fatalf("keys = %q, %q; want the unmapped IPv4 addresses", a, b)
			}
		})
	}
}

func TestIP_Prefixes(t *testing.T) {
	tests := []struct {
		name       string
		opts       []keyfunc.IPOption
		remoteAddr string
		want       string
	}{
		{name: "v6 /56", opts: []keyfunc.IPOption{keyfunc.IPv6Prefix(56)}, remoteAddr: "[2001:db8:1:2ff::1]:1", want: "2001:db8:1:200::/56"},
		{name: "v6 /128", opts: []keyfunc.IPOption{keyfunc.IPv6Prefix(128)}, remoteAddr: "[2001:db8::1]:1", want: "2001:db8::1"},
		{name: "v4 /24", opts: []keyfunc.IPOption{keyfunc.IPv4Prefix(24)}, remoteAddr: "192.0.2.77:1", want: "192.0.2.0/24"},
		{name: "v4 /24 leaves v6 at /64", opts: []keyfunc.IPOption{keyfunc.IPv4Prefix(24)}, remoteAddr: "[2001:db8::1]:1", want: "2001:db8::/64"},
		{name: "mapped uses v4 prefix", opts: []keyfunc.IPOption{keyfunc.IPv4Prefix(16), keyfunc.IPv6Prefix(48)}, remoteAddr: "[::ffff:192.0.2.77]:1", want: "192.0.0.0/16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, mustIP(t, tt.opts...), newReq(tt.remoteAddr), tt.want, nil)
		})
	}
}

func TestIP_BadConfigFailsAtConstruction(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	tests := []struct {
		name    string
		opts    []keyfunc.IPOption
		wantMsg string // the option the error must name
	}{
		{name: "v6 prefix 0", opts: []keyfunc.IPOption{keyfunc.IPv6Prefix(0)}, wantMsg: "IPv6Prefix"},
		{name: "v6 prefix 129", opts: []keyfunc.IPOption{keyfunc.IPv6Prefix(129)}, wantMsg: "IPv6Prefix"},
		{name: "v4 prefix 33", opts: []keyfunc.IPOption{keyfunc.IPv4Prefix(33)}, wantMsg: "IPv4Prefix"},
		{name: "max hops 0", opts: []keyfunc.IPOption{keyfunc.MaxHops(0)}, wantMsg: "MaxHops"},
		{name: "no prefixes", opts: []keyfunc.IPOption{keyfunc.TrustedProxies()}, wantMsg: "TrustedProxies"},
		{name: "invalid prefix", opts: []keyfunc.IPOption{keyfunc.TrustedProxies(prefixes("10.0.0.0/8")[0], netip.Prefix{})}, wantMsg: "TrustedProxies"},
		{name: "hops 0", opts: []keyfunc.IPOption{keyfunc.TrustedHops(0)}, wantMsg: "TrustedHops"},
		{name: "hops over max", opts: []keyfunc.IPOption{keyfunc.TrustedHops(5), keyfunc.MaxHops(4)}, wantMsg: "TrustedHops"},
		{name: "proxies and hops", opts: []keyfunc.IPOption{trusted, keyfunc.TrustedHops(1)}, wantMsg: "TrustedHops"},
		{name: "XFF without trust", opts: []keyfunc.IPOption{keyfunc.FromXForwardedFor()}, wantMsg: "FromXForwardedFor"},
		{name: "Forwarded without trust", opts: []keyfunc.IPOption{keyfunc.FromForwarded()}, wantMsg: "FromForwarded"},
		{name: "header without proxies", opts: []keyfunc.IPOption{keyfunc.FromHeader("X-Real-IP")}, wantMsg: "FromHeader"},
		{name: "header with hops only", opts: []keyfunc.IPOption{keyfunc.TrustedHops(1), keyfunc.FromHeader("X-Real-IP")}, wantMsg: "FromHeader"},
		{name: "bad header name", opts: []keyfunc.IPOption{trusted, keyfunc.FromHeader("X Real IP")}, wantMsg: "FromHeader"},
		{name: "two sources", opts: []keyfunc.IPOption{trusted, keyfunc.FromForwarded(), keyfunc.FromXForwardedFor()}, wantMsg: "more than one"},
		{name: "header and XFF", opts: []keyfunc.IPOption{trusted, keyfunc.FromHeader("X-Real-IP"), keyfunc.FromXForwardedFor()}, wantMsg: "more than one"},
		{name: "context and XFF", opts: []keyfunc.IPOption{trusted, keyfunc.FromContext(func(context.Context) netip.Addr { return netip.Addr{} }), keyfunc.FromXForwardedFor()}, wantMsg: "more than one"},
		{name: "nil context func", opts: []keyfunc.IPOption{keyfunc.FromContext(nil)}, wantMsg: "FromContext"},
		{name: "context with trust", opts: []keyfunc.IPOption{trusted, keyfunc.FromContext(nil)}, wantMsg: "FromContext"},
		{name: "context func with trust", opts: []keyfunc.IPOption{keyfunc.TrustedHops(1), keyfunc.FromContext(func(context.Context) netip.Addr { return netip.Addr{} })}, wantMsg: "FromContext excludes"},
		{name: "nil option", opts: []keyfunc.IPOption{nil}, wantMsg: "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := keyfunc.IP(tt.opts...)
			if err == nil || f != nil {
				t.Fatalf("IP(...) = %v, %v; want nil, error", f != nil, err)
			}
			if !strings.HasPrefix(err.Error(), "keyfunc: ") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("IP(...) error %q; want it to start with \"keyfunc: \" and name %q", err, tt.wantMsg)
			}
		})
	}
}

// TestIP_TrustedProxiesCopiesItsArgument guards against a caller's later
// edit of the slice widening the trust.
func TestIP_TrustedProxiesCopiesItsArgument(t *testing.T) {
	ps := prefixes("10.0.0.0/8")
	f := mustIP(t, keyfunc.TrustedProxies(ps...))
	ps[0] = prefixes("0.0.0.0/0")[0]
	wantKey(t, f, newReq("198.51.100.7:1", xff, "1.1.1.1"), "198.51.100.7", nil)
}

// TestIP_RemoteAddrAllocatesAtMostOnce guards the per-request cost of the
// common case: at most one allocation, none when the key is the host part
// of RemoteAddr as it stands.
func TestIP_RemoteAddrAllocatesAtMostOnce(t *testing.T) {
	tests := []struct {
		name       string
		remoteAddr string
		want       float64
	}{
		{"v4 canonical", "192.0.2.1:1234", 0},
		{"v4 bare", "192.0.2.1", 1},
		{"v6", "[2001:db8:1:2::7]:443", 1},
		{"mapped", "[::ffff:192.0.2.1]:443", 1},
	}
	f := mustIP(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReq(tt.remoteAddr)
			if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got > tt.want {
				t.Fatalf("IP() from %s: %v allocations per request; want <= %v", tt.remoteAddr, got, tt.want)
			}
		})
	}
}

// TestIP_HostileHeaderIsNotScannedToTheEnd guards the bound on work: a
// chain far longer than MaxHops stops after MaxHops entries, and one giant
// entry is rejected, both without allocating.
func TestIP_HostileHeaderIsNotScannedToTheEnd(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	for _, v := range []string{
		strings.Repeat("10.0.0.9,", 7000) + "10.0.0.9",
		strings.Repeat("9", 64<<10),
		"203.0.113.5," + strings.Repeat(" ", 64<<10),
	} {
		r := newReq("10.0.0.1:80", xff, v)
		wantKey(t, f, r, "", keyfunc.ErrNoClientIP)
		if got := testing.AllocsPerRun(10, func() { sinkKey, _ = f(r) }); got != 0 {
			t.Fatalf("%v allocations on a hostile header; want 0", got)
		}
	}
}

// TestIP_OptionsCanBeSharedAcrossConcurrentCalls guards against IP writing
// into an option's state: one option value used by many IP calls at once
// (run with -race).
func TestIP_OptionsCanBeSharedAcrossConcurrentCalls(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("::ffff:10.0.0.0/104")...)
	done := make(chan keyfunc.Func)
	for i := 0; i < 4; i++ {
		go func() {
			f, _ := keyfunc.IP(trusted)
			done <- f
		}()
	}
	for i := 0; i < 4; i++ {
		f := <-done
		if f == nil {
			t.Fatal("IP(trusted) failed")
		}
		wantKey(t, f, newReq("10.0.0.1:80", xff, "203.0.113.5"), "203.0.113.5", nil)
	}
}

// TestIP_UnixSocketPeer: net/http gives a request that came over a Unix
// socket the RemoteAddr "@". It is no address, so TrustedProxies cannot
// trust it (every request has no key, as the option's doc says) and
// TrustedHops, which does not look at the peer, finds the client.
func TestIP_UnixSocketPeer(t *testing.T) {
	r := newReq("@", xff, "203.0.113.5")
	wantKey(t, mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)), r, "", keyfunc.ErrNoClientIP)
	wantKey(t, mustIP(t), r, "", keyfunc.ErrNoClientIP)
	wantKey(t, mustIP(t, keyfunc.TrustedHops(1)), r, "203.0.113.5", nil)
}
