package keyfunc_test

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestLoginCookiesOfCommonFrameworksAreDigests: the authentication cookies
// that common frameworks set by default hold a credential as surely as a
// session id: ASP.NET Core's cookie authentication (".AspNetCore.Cookies")
// and Identity (".AspNetCore.Identity.Application"), WordPress's
// "wordpress_logged_in_<hash>", Laravel's remember-me "remember_web_<hash>"
// (Rails' "remember_user_token" is caught by "token"). Keyed as sent, a
// per-browser limit put the login ticket itself into the store's keys.
func TestLoginCookiesOfCommonFrameworksAreDigests(t *testing.T) {
	for _, name := range []string{
		".AspNetCore.Cookies", ".AspNetCore.Identity.Application",
		"wordpress_logged_in_5c1b8d3e0f2a4b6c8d0e1f2a3b4c5d6e",
		"remember_web_59ba36addc2b2f9401580f014c7f58ea4e30989d", "remember_me",
	} {
		r := newReq("192.0.2.1:1")
		r.AddCookie(&http.Cookie{Name: name, Value: "c2VjcmV0LXRva2Vu"})
		wantKey(t, keyfunc.Must(keyfunc.Cookie(name)), r, secretOf(t, "c2VjcmV0LXRva2Vu"), nil)
	}
}

// TestWordPressAuthCookiesAndPassVariantsAreDigests: WordPress's
// authentication cookie itself, "wordpress_<hash>" over HTTP and
// "wordpress_sec_<hash>" over HTTPS (its AUTH_COOKIE and
// SECURE_AUTH_COOKIE: user name, expiry, session token and HMAC), was keyed
// as sent (only wordpress_logged_in_ was marked); so were headers and
// cookies of a passphrase, a passcode or a pwd, which "passw" missed.
func TestWordPressAuthCookiesAndPassVariantsAreDigests(t *testing.T) {
	const v = "admin|1765000000|c2VjcmV0LXRva2Vu|0123abcd"
	for _, name := range []string{
		"wordpress_5c1b8d3e0f2a4b6c8d0e1f2a3b4c5d6e", "wordpress_sec_5c1b8d3e0f2a4b6c8d0e1f2a3b4c5d6e",
		"passphrase", "pwd",
	} {
		r := newReq("192.0.2.1:1")
		r.AddCookie(&http.Cookie{Name: name, Value: v})
		wantKey(t, keyfunc.Must(keyfunc.Cookie(name)), r, secretOf(t, v), nil)
	}
	for _, name := range []string{"X-Passphrase", "X-Passcode", "X-Pwd", "X-Pass"} {
		wantKey(t, keyfunc.Must(keyfunc.Header(name)), newReq("192.0.2.1:1", name, v), secretOf(t, v), nil)
	}
}
