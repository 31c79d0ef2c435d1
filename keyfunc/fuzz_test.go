package keyfunc_test

import (
	"errors"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
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
	// Forwarded: a comma and a semicolon inside quoted values, an
	// obfuscated port, empty pairs, a blank line between two lines, and
	// for= twice in the proxy's element.
	f.Add("10.0.0.1:80", "", `for="6.6.6.6:_p";by="a,b";;proto=http, for=10.0.0.2;host="x;y"`, "")
	f.Add("10.0.0.1:80", "", "for=6.6.6.6\n\nFor=\"[2001:db8::1]:443\"", "")
	f.Add("10.0.0.1:80", "", "for=6.6.6.6, for=7.7.7.7;for=10.0.0.2", "")
	// A RemoteAddr with an obfuscated port, trusted and not.
	f.Add("[2001:db8:ffff::1]:_p", "6.6.6.6", `for="[2001:db8::7]:_q"`, "")
	f.Add("192.0.2.9:_hidden", "6.6.6.6", "for=6.6.6.6", "")
	// Addresses keyed as the IPv4 address they embed (well-known NAT64,
	// 6to4, Teredo), or not (a private one embedded; the local-use
	// prefix, keyed alone).
	f.Add("[64:ff9b::808:808]:443", "2002:102:304:5::1, 2001:0:4136:e378:8000:63bf:fefd:fcfb", `for="[2002:a00:1::1]"`, "64:ff9b:1::102:304")
	f.Add("10.0.0.1:80", "64:ff9b::808:808, 2002:808:808::1", `for="[2001:0:4136:e378::f5ff:fffe]"`, "2002:a00:1::1")
	// X-Real-IP: the last line counts.
	f.Add("10.0.0.1:80", "", "", "6.6.6.6\n 203.0.113.9\t")
	// Declared network-specific NAT64 prefixes (fuzzNSP): a global IPv4
	// address embedded, a private one, the u-octet set, a suffix set.
	f.Add("[2001:db8:64::808:808]:1", "2001:db8:101:203:4::, 2001:db8:164:ff9b::", "", "")
	f.Add("[2001:db8:1a0:a:7:1ff:ffff:ffff]:1", "64:ff9b:1:ab08:8:8:800:0", "", "")
	f.Add("10.0.0.1:80", "64:ff9b:1:ab08:8:8:800:0, 2001:db8:1a0:a:7:1ff:ffff:ffff", "", "")
	f.Add("[64:ff9b:1:ab0a:0:1:1ff:ff]:1", "2001:db8:64::a00:1, 10.0.0.2", "", "")

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
		{"RemoteAddr/nat64", keyfunc.Must(keyfunc.IP(keyfunc.NAT64Prefixes(fuzzNSP...))), nil},
		{"XFF/nat64/wide", keyfunc.Must(keyfunc.IP(append(wide, trusted, keyfunc.NAT64Prefixes(fuzzNSP...))...)), keyfunc.Must(keyfunc.IP(append(wide, keyfunc.NAT64Prefixes(fuzzNSP...))...))},
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
		kv := []string{}
		for _, l := range strings.Split(fwdValue, "\n") {
			kv = append(kv, "Forwarded", l)
		}
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
		// Declared NAT64 prefixes: the peer, where the plain RemoteAddr
		// reading agrees with parsePeer's, and the X-Forwarded-For
		// client from a trusted peer, keyed as refNSP reads them.
		if a, ok := parsePeer(remoteAddr); ok && keys["RemoteAddr"] == groupKey(a, 32, 64) {
			if got, want := keys["RemoteAddr/nat64"], refNSP(a, 32, 64); got != want {
				t.Fatalf("RemoteAddr/nat64: peer %q: key %q; want %q", remoteAddr, got, want)
			}
		}
		if peerTrusted {
			want := ""
			if a, ok := refXFF(r.Header[xff], trustedPs, 0, keyfunc.DefaultMaxHops); ok {
				want = refNSP(a, 24, 48)
			}
			if got := keys["XFF/nat64/wide"]; got != want {
				t.Fatalf("XFF/nat64/wide: X-Forwarded-For %q: key %q; want %q", r.Header[xff], got, want)
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
		// Forwarded from a trusted peer, where every line reads left to
		// right as RFC 7239 elements and holds no backslash (IP refuses
		// quoted-pairs; it pairs quotes from the right, so a line with a
		// quote left open may read otherwise): the plain walk's key.
		if peerTrusted {
			if a, ok, comparable := refForwarded(r.Header["Forwarded"], trustedPs, keyfunc.DefaultMaxHops); comparable {
				want := ""
				if ok {
					want = groupKey(a, 32, 64)
				}
				if got := keys["Forwarded"]; got != want {
					t.Fatalf("Forwarded %q: key %q; the plain walk gives %q", r.Header["Forwarded"], got, want)
				}
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

// refForwarded is a plain reading of a Forwarded header, walked like
// refXFF with TrustedProxies: each line is split left to right into
// elements at the commas outside quoted strings, and each element into
// pairs at the semicolons outside them; an element is malformed if it is
// longer than 512 bytes, has a pair that is not token=value (value a
// token-like run without quotes or a whole quoted string), or has not
// exactly one for= whose node, less an obfuscated port, is an address.
// comparable is false when a line holds a backslash or leaves a quote
// open, which this reading does not model.
func refForwarded(lines []string, trusted []netip.Prefix, maxHops int) (client netip.Addr, ok, comparable bool) {
	split := make([][]string, len(lines))
	for i, l := range lines {
		if strings.Contains(l, `\`) {
			return netip.Addr{}, false, false
		}
		in, start := false, 0
		for j := 0; j < len(l); j++ {
			switch l[j] {
			case '"':
				in = !in
			case ',':
				if !in {
					split[i] = append(split[i], l[start:j])
					start = j + 1
				}
			}
		}
		if in {
			return netip.Addr{}, false, false
		}
		split[i] = append(split[i], l[start:])
	}
	steps := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "" {
			if steps >= maxHops {
				return netip.Addr{}, false, true
			}
			steps++
			continue
		}
		for j := len(split[i]) - 1; j >= 0; j-- {
			if steps >= maxHops {
				return netip.Addr{}, false, true
			}
			steps++
			a, ok := refForwardedFor(split[i][j])
			if !ok {
				return netip.Addr{}, false, true
			}
			if !slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) }) {
				return a, true, true
			}
		}
	}
	return netip.Addr{}, false, true
}

// refForwardedFor reads the for= address of one Forwarded element (see
// refForwarded).
func refForwardedFor(elem string) (netip.Addr, bool) {
	if len(elem) > 512 {
		return netip.Addr{}, false
	}
	var pairs []string
	in, start := false, 0
	for i := 0; i < len(elem); i++ {
		switch elem[i] {
		case '"':
			in = !in
		case ';':
			if !in {
				pairs = append(pairs, elem[start:i])
				start = i + 1
			}
		}
	}
	pairs = append(pairs, elem[start:])
	var node string
	n := 0
	for _, p := range pairs {
		p = strings.Trim(p, " \t")
		if p == "" {
			continue
		}
		name, v, ok := strings.Cut(p, "=")
		if !ok || name == "" || strings.ContainsFunc(name, func(c rune) bool {
			return !strings.ContainsRune("!#$%&'*+-.^_`|~", c) && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
		}) {
			return netip.Addr{}, false
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if strings.Contains(v, `"`) {
			return netip.Addr{}, false
		}
		if strings.EqualFold(name, "for") {
			node, n = v, n+1
		}
	}
	if n != 1 {
		return netip.Addr{}, false
	}
	if a, ok := parsePeer(node); ok && len(node) <= 100 {
		return a, true
	}
	// An obfuscated port (RFC 7239 6.3) after an IPv4 or bracketed address.
	host, port, found := strings.Cut(node, ":_")
	for found && strings.Contains(port, ":_") { // the last ":_"
		var rest string
		rest, port, _ = strings.Cut(port, ":_")
		host += ":_" + rest
	}
	if !found || port == "" || strings.ContainsFunc(port, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
	}) {
		return netip.Addr{}, false
	}
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") || !strings.HasPrefix(host, "[") && strings.Contains(host, ":") {
		return netip.Addr{}, false
	}
	if a, ok := parsePeer(host); ok && len(host) <= 100 {
		return a, true
	}
	return netip.Addr{}, false
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

// groupKey is the key of a client at a, grouped by the prefix lengths,
// after refEmbedded.
func groupKey(a netip.Addr, v4bits, v6bits int) string {
	a, alone := refEmbedded(a)
	bits := v6bits
	if a.Is4() {
		bits = v4bits
	} else if alone {
		bits = 128
	}
	if bits == a.BitLen() {
		return a.String()
	}
	return netip.PrefixFrom(a, bits).Masked().String()
}

// fuzzNSP are the network-specific prefixes FuzzIP declares: lengths 96,
// 40 and 56, one of them within the local-use prefix 64:ff9b:1::/48.
var fuzzNSP = []netip.Prefix{
	netip.MustParsePrefix("2001:db8:64::/96"),
	netip.MustParsePrefix("2001:db8:100::/40"),
	netip.MustParsePrefix("64:ff9b:1:ab00::/56"),
}

// refNSP is the key of a client at a with fuzzNSP declared, read bit by
// bit from RFC 6052 section 2.2: within a prefix of length L, the IPv4
// address is the 32 bits from bit L on, bits 64..71 (the u-octet)
// skipped; below /96 an address whose u-octet is not zero is no
// translated client and is grouped as IPv6; a global IPv4 address is
// keyed as any IPv4 client; a non-global one by the address less the bits
// after the IPv4 address, alone. Outside the prefixes, groupKey's.
func refNSP(a netip.Addr, v4bits, v6bits int) string {
	for _, p := range fuzzNSP {
		if !a.Is6() || !p.Contains(a) {
			continue
		}
		b := a.As16()
		bit := func(i int) byte { return b[i/8] >> (7 - i%8) & 1 }
		if p.Bits() < 96 && b[8] != 0 {
			return netip.PrefixFrom(a, v6bits).Masked().String()
		}
		var v4 uint32
		i := p.Bits()
		for n := 0; n < 32; i++ {
			if i >= 64 && i < 72 {
				continue
			}
			v4 = v4<<1 | uint32(bit(i))
			n++
		}
		v := netip.AddrFrom4([4]byte{byte(v4 >> 24), byte(v4 >> 16), byte(v4 >> 8), byte(v4)})
		if refGlobal(v) {
			return netip.PrefixFrom(v, v4bits).Masked().Addr().String() + map[bool]string{true: "", false: "/" + strconv.Itoa(v4bits)}[v4bits == 32]
		}
		for ; i < 128; i++ {
			b[i/8] &^= 1 << (7 - i%8)
		}
		return netip.AddrFrom16(b).String()
	}
	return groupKey(a, v4bits, v6bits)
}

// refEmbedded is the oracle's own reading of the IPv6 addresses that
// stand for an IPv4 client: of the well-known NAT64 prefix (RFC 6052, the
// last 32 bits), of 6to4 (RFC 3056, bits 16..47) and of Teredo (RFC 4380,
// the last 32 bits inverted) the IPv4 address when it is global; an
// address of the local-use prefix 64:ff9b:1::/48 (RFC 8215) by itself
// (alone reports it); any other as it is.
func refEmbedded(a netip.Addr) (v netip.Addr, alone bool) {
	if !a.Is6() {
		return a, false
	}
	b := a.As16()
	var v4 [4]byte
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
		copy(v4[:], b[12:])
	case netip.MustParsePrefix("2002::/16").Contains(a):
		copy(v4[:], b[2:6])
	case netip.MustParsePrefix("2001::/32").Contains(a):
		for i := range v4 {
			v4[i] = b[12+i] ^ 0xff
		}
	case netip.MustParsePrefix("64:ff9b:1::/48").Contains(a):
		return a, true
	default:
		return a, false
	}
	if v := netip.AddrFrom4(v4); refGlobal(v) {
		return v, false
	}
	return a, false
}

// refGlobal reports whether the IPv4 address a is globally reachable, by
// netip's predicates and the IANA special-purpose registry's other
// non-global blocks.
func refGlobal(a netip.Addr) bool {
	if a.String() == "192.0.0.9" || a.String() == "192.0.0.10" {
		return true
	}
	if a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() {
		return false
	}
	for _, p := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return false
		}
	}
	return true
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
	// An obfuscated port (RFC 7239 section 6.3) after an IPv4 address or a
	// bracketed IPv6 one, of at most 100 bytes, as a middleware copying a
	// Forwarded node into RemoteAddr leaves it.
	if m := obfuscatedPeer.FindStringSubmatch(s); m != nil && len(m[1]) <= 100 {
		if a, err := netip.ParseAddr(m[1]); err == nil && a.Is4() {
			return a, true
		}
		if len(m[1]) > 2 && m[1][0] == '[' && m[1][len(m[1])-1] == ']' {
			if a, err := netip.ParseAddr(m[1][1 : len(m[1])-1]); err == nil && a.Is6() {
				return a.Unmap().WithZone(""), true
			}
		}
	}
	return netip.Addr{}, false
}

// obfuscatedPeer matches a node and its obfuscated port.
var obfuscatedPeer = regexp.MustCompile(`^(.*):_[A-Za-z0-9._-]+$`)

// FuzzJoin checks that Join is injective: two lists of parts give the same
// key exactly when they are equal. The lists are (a, b) and (c, d), and
// also (a, b, c) against (a, b+c) to move bytes across a boundary. Each
// key must also decode, by the documented grammar alone, into the list of
// its parts, each written as it is or, when longer than MaxPartLen or not
// visible ASCII, as "#" and its Secret digest: so no two lists of any
// length share a key unless two digests collide. Keys are bounded by
// 3+MaxPartLen bytes per part.
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
	if max := len(parts) * (3 + keyfunc.MaxPartLen); len(k) > max {
		t.Fatalf("Join(%q) = %q: %d bytes, over %d", parts, k, len(k), max)
	}
	want := make([]string, len(parts))
	for i, p := range parts {
		want[i] = p
		if len(p) > keyfunc.MaxPartLen || !visibleASCII(p) {
			d, err := keyfunc.Secret(constF(p))(nil)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = "#" + d
		}
	}
	if got, ok := decodeJoin(k); !ok || !slices.Equal(got, want) {
		t.Fatalf("Join(%q) = %q decodes to %q (ok %v); want %q", parts, k, got, ok, want)
	}
	return k, nil
}

// decodeJoin reads a key of Join back into its parts by the documented
// grammar: each part is a decimal length (no leading zero), ':' and that
// many bytes, or '#' and a HashLen-byte digest, which is returned with its
// '#'. ok is false if k is not a sequence of such parts.
func decodeJoin(k string) (parts []string, ok bool) {
	for k != "" {
		if k[0] == '#' {
			if len(k) < 1+keyfunc.HashLen {
				return nil, false
			}
			parts, k = append(parts, k[:1+keyfunc.HashLen]), k[1+keyfunc.HashLen:]
			continue
		}
		i := strings.IndexByte(k, ':')
		if i < 1 || k[0] == '0' {
			return nil, false
		}
		n := 0
		for _, c := range []byte(k[:i]) {
			if c < '0' || c > '9' || n > keyfunc.MaxPartLen {
				return nil, false
			}
			n = n*10 + int(c-'0')
		}
		if n > keyfunc.MaxPartLen || len(k)-i-1 < n {
			return nil, false
		}
		parts, k = append(parts, k[i+1:i+1+n]), k[i+1+n:]
	}
	return parts, len(parts) > 0
}

// visibleASCII reports whether s holds only bytes 0x21..0x7e.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
