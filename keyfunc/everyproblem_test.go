package keyfunc_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// wantEvery checks that a constructor, described by call, refused its
// arguments with exactly the problems want, one per line, in order, and
// that errors.As still finds a *TrustAllError among them when one is.
func wantEvery(t *testing.T, call string, f keyfunc.Func, err error, want ...string) {
	t.Helper()
	if f != nil || err == nil {
		t.Errorf("%s = %v, %v; want nil and an error", call, f != nil, err)
		return
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("%s: error\n\t%s\nwant\n\t%s", call, strings.ReplaceAll(got, "\n", "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestConstructorsReportEveryProblem: IP, Namespace, SecretHMAC, Join
// and FirstOf returned at their first bad argument, so that a call with
// two took two runs to fix. Every problem that does not depend on
// another one reported is now reported, one per line; a problem judged
// against a refused value (TrustedHops against a refused MaxHops, a
// source when several were given) is not.
func TestConstructorsReportEveryProblem(t *testing.T) {
	f, err := keyfunc.IP(nil, keyfunc.IPv6Prefix(0), keyfunc.IPv4Prefix(33), keyfunc.MaxHops(0), keyfunc.TrustedHops(0), nil)
	wantEvery(t, "IP(nil, IPv6Prefix(0), IPv4Prefix(33), MaxHops(0), TrustedHops(0), nil)", f, err,
		"keyfunc: IP: nil option at index 0",
		"keyfunc: IP: nil option at index 5",
		"keyfunc: IP: IPv6Prefix 0 is outside 1..128",
		"keyfunc: IP: IPv4Prefix 33 is outside 1..32",
		"keyfunc: IP: MaxHops 0 is outside 1..1024",
		"keyfunc: IP: TrustedHops 0 is outside 1..1024, whatever MaxHops")

	// TrustedHops(5) fits some valid MaxHops: not judged against MaxHops(0).
	f, err = keyfunc.IP(keyfunc.MaxHops(0), keyfunc.TrustedHops(5))
	wantEvery(t, "IP(MaxHops(0), TrustedHops(5))", f, err, "keyfunc: IP: MaxHops 0 is outside 1..1024")

	// Each bad prefix; the families they cover together are judged once
	// each prefix is valid.
	ps := []netip.Prefix{{}, netip.MustParsePrefix("10.0.0.5/16"), netip.MustParsePrefix("0.0.0.0/0")}
	f, err = keyfunc.IP(keyfunc.TrustedProxies(ps...), keyfunc.IPv4Prefix(0))
	wantEvery(t, "IP(TrustedProxies(invalid, 10.0.0.5/16, 0.0.0.0/0), IPv4Prefix(0))", f, err,
		"keyfunc: IP: IPv4Prefix 0 is outside 1..32",
		"keyfunc: IP: TrustedProxies: prefix 0 is invalid",
		"keyfunc: IP: TrustedProxies: prefix 1, 10.0.0.5/16, has bits set past its length: give 10.0.0.5/32 for that proxy alone, or 10.0.0.0/16 for its whole network",
		"keyfunc: IP: TrustedProxies: prefix 2 (0.0.0.0/0) trusts every address as a proxy, so a client could name any other address; list the proxies' own prefixes, or use TrustedHops when they are unknown")
	var tae *keyfunc.TrustAllError
	if !errors.As(err, &tae) || tae.Index != 2 {
		t.Errorf("errors.As(%v, *TrustAllError) = %v, want the one of prefix 2", err, tae)
	}

	// Two trust options and two sources: each is a problem; the source
	// is judged once there is one.
	f, err = keyfunc.IP(keyfunc.TrustedProxies(), keyfunc.TrustedHops(1), keyfunc.FromHeader("X Real"), keyfunc.FromContext(nil))
	wantEvery(t, "IP(TrustedProxies(), TrustedHops(1), FromHeader(\"X Real\"), FromContext(nil))", f, err,
		"keyfunc: IP: more than one of FromXForwardedFor, FromForwarded, FromHeader, FromContext",
		"keyfunc: IP: TrustedProxies and TrustedHops are exclusive",
		"keyfunc: IP: TrustedProxies: no prefix given")
	f, err = keyfunc.IP(keyfunc.TrustedHops(1), keyfunc.FromContext(nil))
	wantEvery(t, "IP(TrustedHops(1), FromContext(nil))", f, err,
		"keyfunc: IP: FromContext: nil function",
		"keyfunc: IP: FromContext excludes TrustedProxies and TrustedHops (the context's middleware decides trust)")

	f, err = keyfunc.Namespace("a:b", nil)
	wantEvery(t, `Namespace("a:b", nil)`, f, err,
		`keyfunc: Namespace: ns "a:b" has byte 0x3a at 1 (want visible ASCII, no ':' or '#')`,
		"keyfunc: Namespace: f is nil")
	f, err = keyfunc.SecretHMAC([]byte("short"), nil)
	wantEvery(t, "SecretHMAC(5-byte key, nil)", f, err,
		"keyfunc: SecretHMAC: key is shorter than 16 bytes",
		"keyfunc: SecretHMAC: f is nil")
	user := keyfunc.User()
	f, err = keyfunc.Join(user, nil, user, nil)
	wantEvery(t, "Join(user, nil, user, nil)", f, err, "keyfunc: Join: parts 1 and 3 are nil")
	f, err = keyfunc.FirstOf(nil, user)
	wantEvery(t, "FirstOf(nil, user)", f, err, "keyfunc: FirstOf: part 0 is nil")
}
