package keyfunc_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestNamesAreTokensFromTheFirstByte: a header, cookie or Forwarded
// parameter name must be an RFC 9110 token in every byte, the first one
// included.
func TestNamesAreTokensFromTheFirstByte(t *testing.T) {
	f, err := keyfunc.Header("@Key")
	wantRefused(t, "Header(@Key)", f, err, `keyfunc: Header: "@Key" is not a valid header name`)
	f, err = keyfunc.Cookie("(c")
	wantRefused(t, "Cookie((c)", f, err, `keyfunc: Cookie: "(c" is not a valid cookie name`)
	if _, err := keyfunc.IP(keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader(" X-Real-IP")); err == nil {
		t.Errorf("IP(FromHeader(\" X-Real-IP\")) error = nil; want an invalid-name error")
	}
	f = mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", "for=203.0.113.5;@x=1"), "", keyfunc.ErrNoClientIP)
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", "for=203.0.113.5;x@=1"), "", keyfunc.ErrNoClientIP)
}
