package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// configKey returns the key under which the only policy of the
// configuration text is checked for a request with the given headers.
func configKey(t *testing.T, text string, headers ...string) string {
	t.Helper()
	r := httptest.NewRequest("GET", "/", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return preparedKey(t, mustParse(t, text, "test.yaml"), r)
}

// TestConfigCredentialKeysAreDigests: a configuration keyed by a header
// or cookie that carries a credential (key: header:Authorization, an API
// key, a session cookie) put the credential itself into every store key,
// readable in a Redis dump or a key log (standards.md, security pitfalls).
// Such parts are now held as a digest: the same credential gives the same
// key, two credentials two keys, and neither shows in them. Other headers
// stay readable.
func TestConfigCredentialKeysAreDigests(t *testing.T) {
	const secret = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu"
	for _, tc := range []struct {
		name, key, header, cookieOrHeader string
	}{
		{"authorization", "header:Authorization", "Authorization", ""},
		{"api key", "header:x-api-key", "X-Api-Key", ""},
		{"auth token", "header:X-Auth-Token", "X-Auth-Token", ""},
		{"joined", "[ip, header:X-Api-Key]", "X-Api-Key", ""},
		{"session cookie", "cookie:session_id", "Cookie", "session_id="},
		{"sid cookie", "cookie:sid", "Cookie", "sid="},
		{"connect.sid cookie", "cookie:connect.sid", "Cookie", "connect.sid="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "policies:\n  - name: p\n    limit: 10\n    window: 1m\n    key: " + tc.key + "\n"
			value := secret
			if tc.cookieOrHeader != "" {
				value = "c2VjcmV0LXRva2Vu"
			}
			k1 := configKey(t, text, tc.header, tc.cookieOrHeader+value)
			k2 := configKey(t, text, tc.header, tc.cookieOrHeader+value)
			k3 := configKey(t, text, tc.header, tc.cookieOrHeader+value+"x")
			if strings.Contains(k1, "c2VjcmV0LXRva2Vu") || strings.Contains(k1, "eyJ") {
				t.Errorf("key %q holds the credential", k1)
			}
			if k1 != k2 || k1 == k3 {
				t.Errorf("keys %q, %q (same credential), %q (another): want equal, then different", k1, k2, k3)
			}
		})
	}
	plain := configKey(t, "policies:\n  - name: p\n    limit: 10\n    window: 1m\n    key: header:X-Login-User\n", "X-Login-User", "ann")
	if !strings.HasSuffix(plain, "ann") {
		t.Errorf("key %q: X-Login-User is no credential and stays readable", plain)
	}
}

// TestConfigCredentialNamesCommonlyMissed: a cookie named jwt (a bearer
// token, the common name), a header X-JWT-Assertion, and session cookies
// named after "sess" alone (GitHub's _gh_sess, a cookie "sess") are
// credentials too; their values were kept as sent. So are cookies whose
// name ends in sid (express.sid, APISID, __Secure-1PSID) and those under
// the __Secure- and __Host- prefixes.
func TestConfigCredentialNamesCommonlyMissed(t *testing.T) {
	const value = "c2VjcmV0LXRva2Vu"
	for _, tc := range []struct{ key, header, prefix string }{
		{"cookie:jwt", "Cookie", "jwt="},
		{"header:X-JWT-Assertion", "X-JWT-Assertion", ""},
		{"cookie:_gh_sess", "Cookie", "_gh_sess="},
		{"cookie:sess", "Cookie", "sess="},
		{"header:X-Bearer", "X-Bearer", ""},
		// Session ids named after "sid" within a name (express-session's
		// default, Google's SID family) and cookies under the prefixes
		// browsers keep for secure, host-bound cookies.
		{"cookie:express.sid", "Cookie", "express.sid="},
		{"cookie:APISID", "Cookie", "APISID="},
		{"cookie:__Secure-1PSID", "Cookie", "__Secure-1PSID="},
		{"cookie:__Host-id", "Cookie", "__Host-id="},
		{"cookie:user_sid", "Cookie", "user_sid="},
	} {
		text := "policies:\n  - name: p\n    limit: 10\n    window: 1m\n    key: " + tc.key + "\n"
		if k := configKey(t, text, tc.header, tc.prefix+value); strings.Contains(k, value) {
			t.Errorf("key: %s: key %q holds the credential", tc.key, k)
		}
	}
}

// TestCodeCredentialKeysMatchConfig: a policy built in code with
// keyfunc.Header("Authorization") or keyfunc.Cookie("session") kept the
// credential in its key, where the same policy read from a file
// (header:Authorization, cookie:session) held its digest. The two paths
// now share keyfunc's rule and give the same key, hashed once: "p:" and
// the 22-character digest of the value, as keyfunc.Secret writes it.
func TestCodeCredentialKeysMatchConfig(t *testing.T) {
	const value = "c2VjcmV0LXRva2Vu"
	digest, err := keyfunc.Secret(func(*http.Request) (string, error) { return value, nil })(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		part, header, prefix string
		f                    keyfunc.Func
	}{
		{"header:Authorization", "Authorization", "", keyfunc.Must(keyfunc.Header("Authorization"))},
		{"header:X-Api-Key", "X-Api-Key", "", keyfunc.Must(keyfunc.Header("X-Api-Key"))},
		{"cookie:session", "Cookie", "session=", keyfunc.Must(keyfunc.Cookie("session"))},
	} {
		text := "policies:\n  - name: p\n    limit: 10\n    window: 1m\n    key: " + tc.part + "\n"
		fromFile := configKey(t, text, tc.header, tc.prefix+value)
		p := policy.Must(policy.PerMinute("p", 10, tc.f))
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set(tc.header, tc.prefix+value)
		fromCode := preparedKey(t, &policy.Config{Policies: []*policy.Policy{p}}, r)
		if fromFile != "p:"+digest || fromCode != fromFile {
			t.Errorf("%s: key %q from the file, %q from code; want both %q", tc.part, fromFile, fromCode, "p:"+digest)
		}
	}
}
