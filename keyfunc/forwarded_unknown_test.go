package keyfunc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_ForwardedUnknownClient: RFC 7239 lets a proxy write for=unknown
// (section 6.2: it does not know its peer) or an obfuscated identifier
// (section 6.3: for=_hidden, for="_hidden:_p"), both valid elements, but
// IP reported them as a "malformed entry". At the hop the client would be
// taken from, such an element names no client: as a peer without an
// address behind TrustedProxies, it yields ErrNoClientIP (a declared
// fallback is taken, else the key action), saying the client is unknown
// or obfuscated. Under TrustedHops a hop right of the client's is one of
// the counted proxies, whose address is not checked (as RemoteAddr is
// not), so an unknown one there is passed over. Entries left of the
// client are never read. Malformed elements stay malformed.
func TestIP_ForwardedUnknownClient(t *testing.T) {
	const fwd = "Forwarded"
	proxies := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	hops := mustIP(t, keyfunc.TrustedHops(2), keyfunc.FromForwarded())
	type outcome int
	const (
		client outcome = iota
		unknown
		malformed
	)
	for _, tc := range []struct {
		name   string
		f      keyfunc.Func
		header string
		want   outcome
		key    string
	}{
		{"unknown", proxies, "for=unknown", unknown, ""},
		{"unknown in capitals", proxies, "for=Unknown", unknown, ""},
		{"unknown with a port", proxies, `for="unknown:4711"`, unknown, ""},
		{"unknown with an obfuscated port", proxies, `for="unknown:_p"`, unknown, ""},
		{"obfuscated", proxies, "for=_hidden", unknown, ""},
		{"obfuscated with other parameters", proxies, "for=_SEVKISEK.x-1;proto=https;by=10.0.0.1", unknown, ""},
		{"obfuscated with an obfuscated port", proxies, `for="_hidden:_p"`, unknown, ""},
		{"unknown right of the client", proxies, "for=203.0.113.5, for=unknown", unknown, ""},
		{"unknown after a trusted hop", proxies, "for=203.0.113.5, for=_hidden, for=10.0.0.2", unknown, ""},
		{"unknown left of the client", proxies, "for=unknown, for=203.0.113.5", client, "203.0.113.5"},
		{"hops: the client hop unknown", hops, "for=203.0.113.5, for=unknown, for=10.0.0.2", unknown, ""},
		{"hops: a proxy hop unknown", hops, "for=203.0.113.5, for=unknown", client, "203.0.113.5"},
		{"hops: a proxy hop obfuscated", hops, `for=203.0.113.5, for="_p1:_x"`, client, "203.0.113.5"},
		// Not the identifiers of section 6: malformed, as before.
		{"underscore alone", proxies, "for=_", malformed, ""},
		{"obfuscated with a space", proxies, `for="_a b"`, malformed, ""},
		{"unknown with a bad port", proxies, `for="unknown:x"`, malformed, ""},
		{"unknown with an empty port", proxies, `for="unknown:"`, malformed, ""},
		{"unknown with a long port", proxies, `for="unknown:123456"`, malformed, ""},
		{"unknownx", proxies, "for=unknownx", malformed, ""},
		{"hops: malformed proxy hop", hops, "for=203.0.113.5, for=bogus", malformed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReq("10.0.0.1:80", fwd, tc.header)
			got, err := tc.f(r)
			switch tc.want {
			case client:
				if err != nil || got != tc.key {
					t.Fatalf("key %q, %v; want %q", got, err, tc.key)
				}
			case unknown:
				if got != "" || !errors.Is(err, keyfunc.ErrNoClientIP) || !errors.Is(err, keyfunc.ErrNoKey) ||
					strings.Contains(err.Error(), "malformed") || !strings.Contains(err.Error(), "unknown or obfuscated") {
					t.Fatalf("key %q, %v; want ErrNoClientIP saying the client is unknown or obfuscated, not malformed", got, err)
				}
			case malformed:
				if got != "" || !errors.Is(err, keyfunc.ErrNoClientIP) || !strings.Contains(err.Error(), "malformed") {
					t.Fatalf("key %q, %v; want ErrNoClientIP for a malformed entry", got, err)
				}
			}
		})
	}

	// A declared fallback is taken, as for any request without a client
	// address.
	tenant := keyfunc.Must(keyfunc.Header("X-Tenant"))
	first := keyfunc.Must(keyfunc.FirstOf(proxies, tenant))
	wantKey(t, first, newReq("10.0.0.1:80", fwd, "for=unknown", "X-Tenant", "acme"), "1:acme", nil)
}
