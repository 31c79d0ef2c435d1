package keyfunc

import "strings"

// credentialWords are the words whose presence in a header's or cookie's
// name (in any case) marks it as carrying a credential ("sess" covers
// session, sessid and the short _gh_sess; "pass" a password, passphrase
// or passcode, "pwd" its short form; "logged_in" and "remember" the
// login cookies of WordPress, wordpress_logged_in_<hash>, and of Laravel,
// remember_web_<hash>); credentialNames the names marked whole;
// credentialSuffixes and credentialPrefixes the ends that mark one (a
// session id: sid, connect.sid, express.sid, APISID, __Secure-1PSID; the
// cookie prefixes browsers keep for secure cookies; ASP.NET Core's
// cookies, whose authentication ticket is .AspNetCore.Cookies or
// .AspNetCore.Identity.Application; WordPress's, whose authentication
// cookies are wordpress_<hash> and wordpress_sec_<hash>).
var (
	credentialWords    = []string{"auth", "token", "secret", "pass", "pwd", "sess", "credential", "key", "jwt", "bearer", "logged_in", "remember"}
	credentialNames    = []string{"cookie"}
	credentialSuffixes = []string{"sid"}
	credentialPrefixes = []string{"__secure-", "__host-", ".aspnetcore.", "wordpress_"}
)

// credential reports whether a header or cookie of this name carries a
// credential (Authorization, Proxy-Authorization, Cookie, X-Api-Key,
// X-Auth-Token, a session cookie...), whose value [Header] and [Cookie]
// return as a digest, as [Secret] writes it, so that the store, its dumps
// and the logs of keys never show it. It is the one rule for keys built in
// code and for the header: and cookie: parts of a policy file. A name
// marked so wrongly only makes its keys unreadable.
func credential(name string) bool {
	n := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range credentialNames {
		if n == w {
			return true
		}
	}
	for _, w := range credentialSuffixes {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	for _, w := range credentialPrefixes {
		if strings.HasPrefix(n, w) {
			return true
		}
	}
	return false
}

// digest returns v as [Secret] writes it: the first 16 bytes of its SHA-256
// in unpadded base64url.
func digest(v string) string {
	var buf [HashLen]byte
	return string(appendSHA256(buf[:0], v))
}
