package keyfunc

import (
	"math/rand/v2"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// oldParseRemoteAddr is parseRemoteAddr as it was before the IPv4 fast
// path (867329b).
func oldParseRemoteAddr(s string) (netip.Addr, bool) {
	if len(s) > 0 && (s[0] == '[' || strings.Count(s, ":") == 1) {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	return parseHostAddr(s)
}

// TestReviewIPKeyUnchanged checks that IP's key of a RemoteAddr, through
// the fast path or not, is byte for byte what it was before the fast path,
// and fails exactly when it failed, on odd inputs and random mutations of
// canonical ones.
func TestReviewIPKeyUnchanged(t *testing.T) {
	inputs := []string{
		"010.0.0.1:80", "10.0.0.1:0", "1.2.3.4:0", "1.2.3.4:65535", "1.2.3.4:65536", "1.2.3.4:99999",
		"1.2.3.4:", "1.2.3.4", "1.2.3.4%eth0:80", "1.2.3.4%eth0", " 1.2.3.4:80", "1.2.3.4:80 ",
		"1.2.3.4 :80", "1.2.3.4:\t80", "0.0.0.0:1", "00.0.0.0:1", "1.2.3.04:1", "1.2.3.4:00000",
		"1.2.3.4:000000", "1.2.3.4:-1", "1.2.3.4:+1", "255.255.255.255:1", "255.255.255.256:1",
		"[1.2.3.4]:80", "[::ffff:1.2.3.4]:80", "::ffff:1.2.3.4", "[::1]:80", "1.2.3.4:80%x",
		"1.2.3.4:8a", "1.2.3.4.:80", ".1.2.3.4:80", "1.2.3..4:80", "1.2.3.4::80", ":80", "",
		"１.2.3.4:80", "1.2.3.4:８0", "1.2.3.4:1\x00", "\x001.2.3.4:1",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789.:%[] af\x00"
	for range 20000 {
		b := []byte(strconv.Itoa(r.IntN(300)) + "." + strconv.Itoa(r.IntN(300)) + "." +
			strconv.Itoa(r.IntN(300)) + "." + strconv.Itoa(r.IntN(300)) + ":" + strconv.Itoa(r.IntN(100000)))
		for range r.IntN(3) {
			switch i := r.IntN(len(b) + 1); r.IntN(3) {
			case 0:
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			case 1:
				b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
			default:
				if i < len(b) {
					b[i] = alphabet[r.IntN(len(alphabet))]
				}
			}
		}
		inputs = append(inputs, string(b))
	}
	for _, opts := range [][]IPOption{nil, {IPv6Prefix(48)}, {IPv4Prefix(24)}} {
		f, err := IP(opts...)
		if err != nil {
			t.Fatal(err)
		}
		c := &ipConfig{v6bits: DefaultIPv6Prefix, v4bits: DefaultIPv4Prefix, maxHops: DefaultMaxHops}
		for _, o := range opts {
			o(c)
		}
		if errs := c.validate(nil); len(errs) > 0 {
			t.Fatal(errs)
		}
		for _, s := range inputs {
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = s
			key, err := f(req)
			var want string
			a, ok := oldParseRemoteAddr(s)
			if ok {
				want = c.format(a, s)
			}
			if key != want || (err == nil) != ok {
				t.Errorf("IP(%d opts) of RemoteAddr %q = %q, %v; before the fast path %q, ok %v", len(opts), s, key, err, want, ok)
			}
		}
	}
}
