package keyfunc_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_ObfuscatedPortFirstCharacterIsChecked: RFC 7239's obfport is "_"
// followed by letters, digits, '.', '_' or '-', the first character after
// the underscore included. A node whose "port" begins with anything else is
// not an address with an obfuscated port: the trusted element is malformed,
// and so is such a RemoteAddr.
func TestIP_ObfuscatedPortFirstCharacterIsChecked(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.FromForwarded())
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", `for="203.0.113.5:_$p"`), "", keyfunc.ErrNoClientIP)
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", `for="203.0.113.5:_!"`), "", keyfunc.ErrNoClientIP)
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", `for="203.0.113.5:_p$"`), "", keyfunc.ErrNoClientIP)
	wantKey(t, f, newReq("10.0.0.1:1", "Forwarded", `for="203.0.113.5:__"`), "203.0.113.5", nil)
	wantKey(t, mustIP(t), newReq("192.0.2.7:_$"), "", keyfunc.ErrNoClientIP)
}
