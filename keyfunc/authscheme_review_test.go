package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestAuthorizationSchemeSpellingsShareOneKey: the auth scheme of
// Authorization and Proxy-Authorization is case-insensitive, and one or
// more spaces follow it (RFC 9110 section 11.4, credentials = auth-scheme
// [ 1*SP ( token68 / #auth-param ) ]). net/http's own Request.BasicAuth
// accepts "basic", "BASIC", ... alike, so a client holding one valid
// credential that respells the scheme at each request would otherwise get
// a fresh bucket each time (2^5 spellings of Basic, 2^6 of Bearer, and a
// new one per extra space).
func TestAuthorizationSchemeSpellingsShareOneKey(t *testing.T) {
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		f := keyfunc.Must(keyfunc.Header(name))
		for _, group := range [][]string{
			{"Basic dXNlcjpwYXNz", "basic dXNlcjpwYXNz", "BASIC dXNlcjpwYXNz", "bAsIc dXNlcjpwYXNz"},
			{"Bearer tok.en-1", "bearer tok.en-1", "BEARER tok.en-1", "Bearer  tok.en-1", "bearer   tok.en-1"},
		} {
			var first string
			for i, v := range group {
				r := newReq("192.0.2.1:1", name, v)
				if name == "Authorization" && group[0][0] == 'B' && group[0][1] == 'a' {
					if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
						t.Fatalf("BasicAuth over %q = %q, %q, %v; the test needs a value net/http accepts", v, u, p, ok)
					}
				}
				got, err := f(r)
				if err != nil {
					t.Fatalf("Header(%q) over %q: %v", name, v, err)
				}
				if i == 0 {
					first = got
				} else if got != first {
					t.Errorf("Header(%q) over %q = %q, over %q = %q; want one key for one credential", name, v, got, group[0], first)
				}
			}
		}
		// Respelling the scheme must not merge distinct credentials.
		a, _ := f(newReq("192.0.2.1:1", name, "Bearer tok"))
		b, _ := f(newReq("192.0.2.1:1", name, "Bearer TOK"))
		c, _ := f(newReq("192.0.2.1:1", name, "Basic tok"))
		d, _ := f(newReq("192.0.2.1:1", name, "sk_AbC"))
		e, _ := f(newReq("192.0.2.1:1", name, "sk_abc"))
		if a == b || a == c || d == e {
			t.Errorf("Header(%q): %q, %q, %q, %q, %q; want distinct keys for distinct credentials or schemes (a value without a scheme is kept whole)", name, a, b, c, d, e)
		}
	}
	// A header that is not an Authorization field keeps its value whole.
	k := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	a, _ := k(newReq("192.0.2.1:1", "X-Api-Key", "Bearer tok"))
	b, _ := k(newReq("192.0.2.1:1", "X-Api-Key", "bearer tok"))
	if a == b {
		t.Errorf("Header(X-Api-Key) gives %q for both spellings; an API key is case-sensitive", a)
	}
}

// TestBasicCredentialsShareOneKeyWhateverTheirPadBits: net/http's
// Request.BasicAuth decodes with base64.StdEncoding, which ignores the
// unused low bits of the last character before "=" padding, so
// "dXNlcjpwYQ==" and "dXNlcjpwYf==" are one user:password to it (16
// spellings when one byte is left over, 4 when two are). Each spelling
// must not get a key of its own.
func TestBasicCredentialsShareOneKeyWhateverTheirPadBits(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for _, tc := range []struct{ canon, user, pass string }{
		{"dXNlcjpwYQ==", "user", "pa"},  // 7 bytes: the 2nd-last char holds 2 bits, 4 unused
		{"dXNlcjpwYXM=", "user", "pas"}, // 8 bytes: the last char holds 4 bits, 2 unused
	} {
		want, err := f(newReq("192.0.2.1:1", "Authorization", "Basic "+tc.canon))
		if err != nil {
			t.Fatal(err)
		}
		pad := len(tc.canon) - len(strings.TrimRight(tc.canon, "="))
		last := len(tc.canon) - pad - 1
		i := strings.IndexByte(alphabet, tc.canon[last])
		unused := 2 * pad // bits of the last character that hold no data
		for low := 1; low < 1<<unused; low++ {
			v := tc.canon[:last] + string(alphabet[i|low]) + tc.canon[last+1:]
			r := newReq("192.0.2.1:1", "Authorization", "Basic "+v)
			if u, p, ok := r.BasicAuth(); !ok || u != tc.user || p != tc.pass {
				t.Fatalf("BasicAuth over %q = %q, %q, %v; the test needs a spelling net/http accepts", v, u, p, ok)
			}
			if got, err := f(r); err != nil || got != want {
				t.Errorf("Header(Authorization) over %q = %q, %v; want %q, the key of %q, which net/http reads as the same %s:%s", "Basic "+v, got, err, want, "Basic "+tc.canon, tc.user, tc.pass)
			}
		}
	}
}
