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
