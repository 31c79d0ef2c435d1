package keyfunc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// viaChi runs r through chi's client-IP middleware mw and returns what f
// says inside it.
func viaChi(mw func(http.Handler) http.Handler, f keyfunc.Func, r *http.Request) (string, error) {
	var key string
	var err error
	mw(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		key, err = f(r)
	})).ServeHTTP(httptest.NewRecorder(), r)
	return key, err
}

// agreementCases are requests on which chi's ClientIPFrom* middlewares and
// IP must reach the same verdict. (They differ on purpose on inputs left
// out here: IP accepts "addr:port" entries, which chi rejects; treats an
// empty entry inside a line of a trusted chain as malformed, which chi
// skips; and gives up after MaxHops entries or blank lines, where chi
// walks the whole header.)
var agreementCases = []struct {
	name       string
	remoteAddr string
	headers    []string
}{
	{"untrusted peer with XFF", "198.51.100.7:1", []string{xff, "1.1.1.1"}},
	{"forged leftmost", "10.0.0.1:1", []string{xff, "6.6.6.6, 203.0.113.5, 10.0.0.2"}},
	{"lines merged", "10.0.0.1:1", []string{xff, "6.6.6.6", xff, "203.0.113.5, 10.0.0.2"}},
	{"v6 client", "10.0.0.1:1", []string{xff, "2001:db8:1:2::99"}},
	{"mapped client", "10.0.0.1:1", []string{xff, "::ffff:203.0.113.5"}},
	{"mapped trusted hop", "10.0.0.1:1", []string{xff, "203.0.113.5, ::ffff:10.0.0.9"}},
	{"mapped peer", "[::ffff:10.0.0.1]:1", []string{xff, "203.0.113.5"}},
	{"zoned client", "10.0.0.1:1", []string{xff, "fe80::1%eth0"}},
	{"all trusted", "10.0.0.1:1", []string{xff, "10.0.0.3, 10.0.0.2"}},
	{"garbage mid-chain", "10.0.0.1:1", []string{xff, "203.0.113.5, junk, 10.0.0.2"}},
	{"blank lines", "10.0.0.1:1", []string{xff, "203.0.113.5", xff, "", xff, "", xff, "10.0.0.2"}},
	{"only blank lines", "10.0.0.1:1", []string{xff, "", xff, ""}},
	{"no header", "10.0.0.1:1", nil},
	{"bad peer", "nonsense", []string{xff, "203.0.113.5"}},
	{"real ip header", "10.0.0.1:1", []string{"X-Real-IP", "203.0.113.5"}},
	{"real ip header twice", "10.0.0.1:1", []string{"X-Real-IP", "6.6.6.6", "X-Real-IP", "203.0.113.5"}},
	{"real ip from untrusted peer", "198.51.100.7:1", []string{"X-Real-IP", "203.0.113.5"}},
}

// TestIP_AgreesWithChiClientIP proves that IP reading chi's context value
// (FromContext) and IP deciding by itself give the same key as each other,
// and the same address as chi, for each of chi's three trust modes.
func TestIP_AgreesWithChiClientIP(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	modes := []struct {
		name   string
		chi    func(http.Handler) http.Handler
		native []keyfunc.IPOption
	}{
		{"XFF prefixes", middleware.ClientIPFromXFF("10.0.0.0/8"), []keyfunc.IPOption{trusted}},
		{"XFF hops", middleware.ClientIPFromXFFTrustedProxies(2), []keyfunc.IPOption{keyfunc.TrustedHops(2)}},
		{"header", middleware.ClientIPFromHeader("X-Real-IP", "10.0.0.0/8"), []keyfunc.IPOption{trusted, keyfunc.FromHeader("X-Real-IP")}},
	}
	fromChi := mustIP(t, keyfunc.FromContext(middleware.GetClientIPAddr))
	for _, m := range modes {
		native := mustIP(t, m.native...)
		exact := mustIP(t, append(m.native, keyfunc.IPv6Prefix(128))...)
		for _, tc := range agreementCases {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				viaCtx, errCtx := viaChi(m.chi, fromChi, newReq(tc.remoteAddr, tc.headers...))
				direct, errDirect := native(newReq(tc.remoteAddr, tc.headers...))
				if viaCtx != direct || (errCtx == nil) != (errDirect == nil) {
					t.Fatalf("via chi context = %q (%v); native = %q (%v); want the same", viaCtx, errCtx, direct, errDirect)
				}
				if errCtx != nil && !errors.Is(errCtx, keyfunc.ErrNoClientIP) {
					t.Fatalf("via chi context error %v; want ErrNoClientIP", errCtx)
				}
				var chiAddr string
				viaChi(m.chi, func(r *http.Request) (string, error) {
					chiAddr = middleware.GetClientIP(r.Context())
					return "", nil
				}, newReq(tc.remoteAddr, tc.headers...))
				ours, _ := exact(newReq(tc.remoteAddr, tc.headers...))
				if chiAddr != ours {
					t.Fatalf("chi GetClientIP = %q; IP (/128) = %q; want the same", chiAddr, ours)
				}
			})
		}
	}
}

// TestIP_BehindChiRealIPTheClientChoosesTheKey documents why RealIP must
// not be combined with the default IP: RealIP has already replaced
// RemoteAddr with what the client claimed.
func TestIP_BehindChiRealIPTheClientChoosesTheKey(t *testing.T) {
	f := mustIP(t)
	//lint:ignore SA1019 the deprecated middleware is what this test is about.
	realIP := middleware.RealIP
	for _, claim := range []string{"1.1.1.1", "2.2.2.2"} {
		got, err := viaChi(realIP, f, newReq("198.51.100.7:1", xff, claim))
		if err != nil || got != claim {
			t.Fatalf("behind RealIP, key = %q, %v; want the claimed %q", got, err, claim)
		}
	}
}
