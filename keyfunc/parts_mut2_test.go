package keyfunc_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestNamesAreTokensFromTheFirstByte: a header, cookie or Forwarded
// parameter name must be an RFC 9110 token in every byte, the first one
// included.
func TestNamesAreTokensFromTheFirstByte(t *testing.T) {
	if f, err := keyfunc.Header("@Key"); f != nil || err == nil || err.Error() != `keyfunc: Header: "@Key" is not a valid header name` {
		t.Errorf("Header(@Key) = %v, %v; want nil and an invalid-name error", f != nil, err)
	}
	if f, err := keyfunc.Cookie("(c"); f != nil || err == nil || err.Error() != `keyfunc: Cookie: "(c" is not a valid cookie name` {
		t.Errorf("Cookie((c) = %v, %v; want nil and an invalid-name error", f != nil, err)
	}
	if _, err := keyfunc.IP(keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromHeader(" X-Real-IP")); err == nil {
		t.Errorf("IP(FromHeader(\" X-Real-IP\")) error = nil; want an invalid-name error")
	}
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", "for=203.0.113.5;@x=1"), "", keyfunc.ErrNoClientIP)
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", "for=203.0.113.5;x@=1"), "", keyfunc.ErrNoClientIP)
}
