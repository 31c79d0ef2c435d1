package keyfunc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestHeaderAndCookieOfCredentialAreDigests: Header("Authorization") and
// Cookie("session") in code returned the credential as sent, so that it
// landed in store keys, their dumps and key logs, while the same parts in a
// configuration file (header:Authorization, cookie:session) were hashed.
// Header and Cookie now hash the value as Secret does whenever the name
// marks a credential, by the rule the configuration used; other names
// (X-User, X-Tenant, a theme cookie) stay readable.
func TestHeaderAndCookieOfCredentialAreDigests(t *testing.T) {
	const secret = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu"
	for _, name := range []string{
		"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "x-api-key", "X-Auth-Token",
		"X-JWT-Assertion", "X-Bearer", "X-Session-Id", "X-Client-Secret", "X-Password",
	} {
		f := keyfunc.Must(keyfunc.Header(name))
		wantKey(t, f, newReq("192.0.2.1:1", name, secret), secretOf(t, secret), nil)
		wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	}
	for _, name := range []string{
		"session", "session_id", "sid", "connect.sid", "express.sid", "APISID", "user_sid",
		"__Secure-1PSID", "__Host-id", "jwt", "_gh_sess", "sess", "auth", "api_key",
	} {
		f := keyfunc.Must(keyfunc.Cookie(name))
		r := newReq("192.0.2.1:1")
		r.AddCookie(&http.Cookie{Name: name, Value: "c2VjcmV0LXRva2Vu"})
		wantKey(t, f, r, secretOf(t, "c2VjcmV0LXRva2Vu"), nil)
		wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	}
	// Not credentials: kept as sent.
	for _, name := range []string{"X-User", "X-Tenant", "X-Login-User", "X-Client", "User-Agent", "Host"} {
		f := keyfunc.Must(keyfunc.Header(name))
		r := newReq("192.0.2.1:1", name, "acme")
		if name == "Host" {
			r.Host = "acme"
		}
		wantKey(t, f, r, "acme", nil)
	}
	for _, name := range []string{"theme", "lang", "s"} {
		r := newReq("192.0.2.1:1")
		r.AddCookie(&http.Cookie{Name: name, Value: "dark"})
		wantKey(t, keyfunc.Must(keyfunc.Cookie(name)), r, "dark", nil)
	}
}

// TestSecretOfCredentialHeaderIsHarmless: Secret over a Header or Cookie
// that already hashes hashes the digest: still a HashLen digest, the same
// for one credential and different for two, with nothing of the value in
// it.
func TestSecretOfCredentialHeaderIsHarmless(t *testing.T) {
	f := keyfunc.Secret(keyfunc.Must(keyfunc.Header("Authorization")))
	a1, err1 := f(newReq("192.0.2.1:1", "Authorization", "Bearer one"))
	a2, err2 := f(newReq("192.0.2.1:1", "Authorization", "Bearer one"))
	b, err3 := f(newReq("192.0.2.1:1", "Authorization", "Bearer two"))
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if len(a1) != keyfunc.HashLen || a1 != a2 || a1 == b || strings.Contains(a1, "one") {
		t.Fatalf("Secret(Header(Authorization)) = %q, %q, %q; want one %d-character digest per credential", a1, a2, b, keyfunc.HashLen)
	}
	if want := secretOf(t, secretOf(t, "Bearer one")); a1 != want {
		t.Fatalf("Secret(Header(Authorization)) = %q; want the digest of the digest %q", a1, want)
	}
}
