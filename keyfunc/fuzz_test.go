package keyfunc_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// checkKey fails unless (key, err) is a well-formed IP result: either a
// non-empty key that parses as an address or a masked prefix, or "" and an
// ErrNoKey-family error.
func checkKey(t *testing.T, cfg string, key string, err error) {
	t.Helper()
	if err != nil {
		if key != "" || !errors.Is(err, keyfunc.ErrNoKey) || !errors.Is(err, keyfunc.ErrNoClientIP) {
			t.Fatalf("%s: key %q, error %v; want \"\" and an ErrNoClientIP error", cfg, key, err)
		}
		return
	}
	if key == "" {
		t.Fatalf("%s: empty key with nil error", cfg)
	}
	if a, perr := netip.ParseAddr(key); perr == nil {
		if a.Zone() != "" || a.Is4In6() || a.String() != key {
			t.Fatalf("%s: key %q is not a canonical unzoned, unmapped address", cfg, key)
		}
		return
	}
	p, perr := netip.ParsePrefix(key)
	if perr != nil || p != p.Masked() || p.Addr().Is4In6() || p.String() != key {
		t.Fatalf("%s: key %q is neither a canonical address nor a masked prefix", cfg, key)
	}
}

// FuzzIP feeds arbitrary RemoteAddr and header values to IP under each
// trust mode. IP must never panic, never return an empty key with a nil
// error, return canonical keys only, and ignore every header when the peer
// is not a trusted proxy; from a trusted peer, X-Forwarded-For and
// X-Real-IP keys must be those of plain reference readings.
func FuzzIP(f *testing.F) {
	f.Add("192.0.2.1:1234", "203.0.113.5", "for=203.0.113.5", "203.0.113.5")
	f.Add("10.0.0.1:80", "6.6.6.6, 203.0.113.5, 10.0.0.2", `for=6.6.6.6, for="[2001:db8::1]:80";proto=https`, "::ffff:1.2.3.4")
	f.Add("[::ffff:10.0.0.1]:80", "::ffff:5.6.7.8, ::ffff:10.0.0.9", "For=unknown", "bogus")
	f.Add("[fe80::1%eth0]:80", "[2001:db8::1]:443,", `for="_hidden"`, "")
	f.Add("", ",,,", `for="`, "1.2.3.4:5")
	f.Add("10.255.255.255", " \t, 10.0.0.1", "for=10.0.0.1;for=10.0.0.2", "[::1]")
	f.Add("[::ffff:10.0.0.1]", "::ffff:1.2.3.4, ::fhff:10.0.0.2", `for="[::ffff:1.2.3.4]:1"`, "::ffff:5.6.7.8") // a bracketed bare peer is parsed (and here trusted)
	// X-Real-IP: the last line counts.
	f.Add("10.0.0.1:80", "", "", "6.6.6.6\n 203.0.113.9\t")

	trusted := keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48"))
	plain := keyfunc.Must(keyfunc.IP())
	wide := []keyfunc.IPOption{keyfunc.IPv4Prefix(24), keyfunc.IPv6Prefix(48)}
	configs := []struct {
		name string
		f    keyfunc.Func
		peer keyfunc.Func // for a peer-gated source: the key of an untrusted peer
	}{
		{"RemoteAddr", plain, nil},
		{"XFF", keyfunc.Must(keyfunc.IP(trusted)), plain},
		{"XFF/4hops/wide", keyfunc.Must(keyfunc.IP(append(wide, trusted, keyfunc.MaxHops(4))...)), keyfunc.Must(keyfunc.IP(wide...))},
		{"Forwarded", keyfunc.Must(keyfunc.IP(trusted, keyfunc.FromForwarded())), plain},
		{"X-Real-IP", keyfunc.Must(keyfunc.IP(trusted, keyfunc.FromHeader("X-Real-IP"))), plain},
		{"hops", keyfunc.Must(keyfunc.IP(keyfunc.TrustedHops(2))), nil},
		{"Forwarded/hops", keyfunc.Must(keyfunc.IP(keyfunc.TrustedHops(1), keyfunc.FromForwarded())), nil},
	}
	// The X-Forwarded-For configurations, checked against refXFF.
	trustedPs := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	refs := []struct {
		config           string
		hops, maxHops    int
		v4bits, v6bits   int
		needsTrustedPeer bool
	}{
		{"XFF", 0, keyfunc.DefaultMaxHops, 32, 64, true},
		{"XFF/4hops/wide", 0, 4, 24, 48, true},
		{"hops", 2, keyfunc.DefaultMaxHops, 32, 64, false},
	}
	f.Fuzz(func(t *testing.T, remoteAddr, xffValue, fwdValue, realIP string) {
		// A newline (impossible in a real header value) separates header
		// lines of X-Forwarded-For and X-Real-IP, so that several lines,
		// blank ones included, are fuzzed too.
		xffLines := strings.Split(xffValue, "\n")
		kv := []string{"Forwarded", fwdValue}
		for _, l := range strings.Split(realIP, "\n") {
			kv = append(kv, "X-Real-IP", l)
		}
		for _, l := range xffLines {
			kv = append(kv, xff, l)
		}
		r := newReq(remoteAddr, kv...)
		peerTrusted := false
		if a, ok := parsePeer(remoteAddr); ok {
			peerTrusted = netip.MustParsePrefix("10.0.0.0/8").Contains(a) || netip.MustParsePrefix("2001:db8:ffff::/48").Contains(a)
		}
		keys := make(map[string]string, len(configs))
		for _, c := range configs {
			key, err := c.f(r)
			checkKey(t, c.name, key, err)
			keys[c.name] = key
			if c.peer != nil && !peerTrusted {
				peerKey, peerErr := c.peer(r)
				if key != peerKey || (err == nil) != (peerErr == nil) {
					t.Fatalf("%s: untrusted peer %q: key %q (%v); want the peer's %q (%v)", c.name, remoteAddr, key, err, peerKey, peerErr)
				}
			}
		}
		// The same chain written as Forwarded elements (for="entry") must
		// give the same key, where both syntaxes can say it.
		if fwdLines, ok := asForwarded(xffLines); ok {
			kv := []string{}
			for _, l := range fwdLines {
				kv = append(kv, "Forwarded", l)
			}
			r2 := newReq(remoteAddr, kv...)
			k1, err1 := configs[1].f(r)
			k2, err2 := configs[3].f(r2)
			if k1 != k2 || (err1 == nil) != (err2 == nil) {
				t.Fatalf("X-Forwarded-For %q: key %q (%v); as Forwarded %q: key %q (%v)", xffLines, k1, err1, fwdLines, k2, err2)
			}
		}
		for _, ref := range refs {
			if ref.needsTrustedPeer && !peerTrusted {
				continue
			}
			want := ""
			if a, ok := refXFF(r.Header[xff], trustedPs, ref.hops, ref.maxHops); ok {
				want = groupKey(a, ref.v4bits, ref.v6bits)
			}
			if got := keys[ref.config]; got != want {
				t.Fatalf("%s: X-Forwarded-For %q: key %q; the plain walk gives %q", ref.config, r.Header[xff], got, want)
			}
		}
		// X-Real-IP from a trusted peer: its last line, trimmed, is the
		// client, or there is none.
		if peerTrusted {
			want := ""
			if a, ok := refSingle(r.Header["X-Real-Ip"]); ok {
				want = groupKey(a, 32, 64)
			}
			if got := keys["X-Real-IP"]; got != want {
				t.Fatalf("X-Real-IP %q: key %q; its last line reads %q", r.Header["X-Real-Ip"], got, want)
			}
		}
	})
}

// refSingle is a plain reading of a single-value header (FromHeader): the
// last line, trimmed of spaces and tabs, must be an address (at most 512
// bytes before trimming, 100 after).
func refSingle(lines []string) (netip.Addr, bool) {
	if len(lines) == 0 {
		return netip.Addr{}, false
	}
	v := lines[len(lines)-1]
	e := strings.Trim(v, " \t")
	if len(v) > 512 || len(e) > 100 || e == "" {
		return netip.Addr{}, false
	}
	return parsePeer(e)
}

// asForwarded rewrites X-Forwarded-For lines as Forwarded lines, each
// entry e becoming for="e" (trimmed), and reports false for chains whose
// meaning the rewriting could change: entries over 100 bytes (the
// elements are longer, closer to the 512-byte limit), and entries holding
// a quote, a backslash, a ';' or an obfuscated port (":_"), which
// Forwarded reads otherwise.
func asForwarded(lines []string) ([]string, bool) {
	out := make([]string, len(lines))
	for i, l := range lines {
		if l == "" {
			continue
		}
		entries := strings.Split(l, ",")
		for j, e := range entries {
			if len(e) > 100 || strings.ContainsAny(e, "\"\\;") || strings.Contains(e, ":_") {
				return nil, false
			}
			entries[j] = `for="` + strings.Trim(e, " \t") + `"`
		}
		out[i] = strings.Join(entries, ", ")
	}
	return out, true
}

// refXFF is a plain reading of the walk that IP does incrementally: each
// line split at every comma, walked from the right. A blank line is
// skipped but counts as a step, and at most maxHops steps are taken. An
// entry is malformed if it is longer than 512 bytes, or, trimmed, longer
// than 100 bytes (no address with a sane zone is) or not an address. With
// hops > 0 the client is the hops-th entry; else the first one outside
// trusted. ok is false when there is no client.
func refXFF(lines []string, trusted []netip.Prefix, hops, maxHops int) (client netip.Addr, ok bool) {
	steps, n := 0, 0
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "" {
			if steps >= maxHops {
				return netip.Addr{}, false
			}
			steps++
			continue
		}
		entries := strings.Split(lines[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			if steps >= maxHops {
				return netip.Addr{}, false
			}
			steps++
			e := strings.Trim(entries[j], " \t")
			if len(entries[j]) > 512 || len(e) > 100 {
				return netip.Addr{}, false
			}
			a, ok := parsePeer(e)
			if !ok || e == "" {
				return netip.Addr{}, false
			}
			n++
			if hops > 0 {
				if n == hops {
					return a, true
				}
				continue
			}
			if !slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) }) {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}

// groupKey is the key of a client at a, grouped by the prefix lengths.
func groupKey(a netip.Addr, v4bits, v6bits int) string {
	bits := v6bits
	if a.Is4() {
		bits = v4bits
	}
	if bits == a.BitLen() {
		return a.String()
	}
	return netip.PrefixFrom(a, bits).Masked().String()
}

// parsePeer is an independent reading of RemoteAddr for the fuzz oracle:
// net/http's "host:port" or a bare address (an IPv6 one possibly in
// brackets, which IP accepts too), unmapped.
func parsePeer(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// FuzzJoin checks that Join is injective: two lists of parts give the same
// key exactly when they are equal. The lists are (a, b) and (c, d), and
// also (a, b, c) against (a, b+c) to move bytes across a boundary.
func FuzzJoin(f *testing.F) {
	f.Add("a:b", "c", "a", "b:c")
	f.Add("1:a", "b", "1", "a1:b")
	f.Add("#", "x", "#x", "")
	f.Add("192.0.2.1", "alice", "192.0.2.1", "alice")
	f.Add("\x00\xff", " ", "long long long long long long long long long long long long long long", "9")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		k1, err1 := keyOf(t, a, b)
		k2, err2 := keyOf(t, c, d)
		if err1 != nil || err2 != nil {
			return // checked by keyOf
		}
		if (k1 == k2) != (a == c && b == d) {
			t.Fatalf("Join(%q, %q) = %q, Join(%q, %q) = %q", a, b, k1, c, d, k2)
		}
		if c != "" {
			k3, err3 := keyOf(t, a, b, c)
			k4, err4 := keyOf(t, a, b+c)
			if err3 == nil && err4 == nil && k3 == k4 {
				t.Fatalf("Join(%q, %q, %q) = Join(%q, %q) = %q", a, b, c, a, b+c, k3)
			}
		}
	})
}

// keyOf joins constant parts. A list with an empty part must fail with an
// ErrNoKey error; any other list must yield a non-empty visible-ASCII key.
func keyOf(t *testing.T, parts ...string) (string, error) {
	t.Helper()
	fs := make([]keyfunc.Func, len(parts))
	empty := false
	for i, p := range parts {
		fs[i] = constF(p)
		empty = empty || p == ""
	}
	k, err := keyfunc.Must(keyfunc.Join(fs...))(newReq("192.0.2.1:1"))
	if empty {
		if err == nil || k != "" || !errors.Is(err, keyfunc.ErrNoKey) {
			t.Fatalf("Join(%q) = %q, %v; want an ErrNoKey error", parts, k, err)
		}
		return "", err
	}
	if err != nil || k == "" {
		t.Fatalf("Join(%q) = %q, %v; want a key", parts, k, err)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			t.Fatalf("Join(%q) = %q: byte %d is not visible ASCII", parts, k, i)
		}
	}
	return k, nil
}
