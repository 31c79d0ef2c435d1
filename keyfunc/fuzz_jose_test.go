package keyfunc_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// FuzzJOSE feeds arbitrary values to a credential header (X-Auth-Token)
// and to Authorization after "Bearer ". Neither may panic or fail, and
// each key must be the digest of refCanonJOSE's reading of the value:
// a JWS or JWE compact serialization in its one spelling (each segment
// re-encoded from its decoded bytes, white space inside dropped), any
// other value as it is. So two values share a key exactly when they
// decode alike, segment by segment. A value that is a token once its
// white space is dropped is also that token as the whole Authorization
// value, with no scheme, wherever a space in it falls.
func FuzzJOSE(f *testing.F) {
	f.Add(jws(`{"alg":"ES256","kid":"k"}`, `{"sub":"bob"}`, 64))
	f.Add(jws(`{"alg":"HS256","b64":false,"crit":["b64"]}`, ``, 32))
	f.Add(jwe(`{"alg":"RSA-OAEP","enc":"A256GCM"}`, 256, 12, 37, 16))
	f.Add(jwe(`{"alg":"dir","enc":"A128CBC-HS256"}`, 0, 16, 50, 16))
	f.Add("eyJhbGciOiJIUzI1NiJ9.abd.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB")
	f.Add("eyJhbGciOiJIUzI1NiJ9..AB")
	f.Add("eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifR.eyJzdWIiOiJib2IifT.AB") // every segment respelled
	f.Add(`eyJhbGciOiJ4IiwibiI6MWU0MDB9.AB.AB`)                       // {"alg":"x","n":1e400}
	f.Add("eyJhbGciOiJIUzI1NiJ9 . e30 .\u00a0AB")                     // white space, NBSP too
	f.Add("eyJhbGciOi JIUzI1NiJ9.e30.AB")                             // a space in the header: no scheme
	f.Add("e yJhbGciOiJIUzI1NiJ9.e30.AB")                             // a one-character first word
	f.Add("a.b.c")
	f.Add("....")
	xauth := keyfunc.Must(keyfunc.Header("X-Auth-Token"))
	auth := keyfunc.Must(keyfunc.Header("Authorization"))
	f.Fuzz(func(t *testing.T, v string) {
		if v == "" || strings.Trim(v, " \t") != v {
			return // trimmed or missing: other tests' business
		}
		want, _ := keyfunc.Secret(constF(refCanonJOSE(v)))(nil)
		if got, err := xauth(newReq("192.0.2.1:1", "X-Auth-Token", v)); err != nil || got != want {
			t.Fatalf("X-Auth-Token %q: key %q, %v; want %q, the digest of %q", v, got, err, want, refCanonJOSE(v))
		}
		want, _ = keyfunc.Secret(constF("Bearer " + refCanonJOSE(v)))(nil)
		if got, err := auth(newReq("192.0.2.1:1", "Authorization", "Bearer "+v)); err != nil || got != want {
			t.Fatalf("Authorization: Bearer %q: key %q, %v; want %q", v, got, err, want)
		}
		if c, ok := refJOSE(strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, v)); ok {
			want, _ = keyfunc.Secret(constF(c))(nil)
			if got, err := auth(newReq("192.0.2.1:1", "Authorization", v)); err != nil || got != want {
				t.Fatalf("Authorization %q: key %q, %v; want %q, the digest of the token %q", v, got, err, want, c)
			}
		}
	})
}

// refCanonJOSE is the fuzz oracle's own reading of a compact JWS or JWE
// (see refJOSE); a value with two or four dots and white space inside is
// read without its white space (go-jose's ParseSigned drops it), and is
// kept as it is, white space included, when that is no token.
func refCanonJOSE(v string) string {
	if n := strings.Count(v, "."); n == 2 || n == 4 {
		var b strings.Builder
		for _, r := range v {
			if !unicode.IsSpace(r) {
				b.WriteRune(r)
			}
		}
		if s := b.String(); s != v {
			if c, ok := refJOSE(s); ok {
				return c
			}
			return v
		}
	}
	c, _ := refJOSE(v)
	return c
}

// refJOSE reads a compact JWS or JWE: three or five segments of unpadded
// base64url (nothing else, not even the line breaks Go's decoder skips),
// the first non-empty, at most 16 KiB, decoding to a JSON object whose
// "alg" (and for five segments "enc") is a string. Such a value is
// returned with each segment re-encoded from its decoded bytes, but a JWS
// payload whose header says "b64": false (RFC 7797), which is text, and
// true; any other value as it is and false.
func refJOSE(v string) (string, bool) {
	segs := strings.Split(v, ".")
	if len(segs) != 3 && len(segs) != 5 || segs[0] == "" || len(segs[0]) > 16<<10 {
		return v, false
	}
	e := base64.RawURLEncoding
	dec := make([][]byte, len(segs))
	for i, s := range segs {
		if strings.Trim(s, b64url) != "" {
			return v, false
		}
		b, err := e.DecodeString(s)
		if err != nil {
			return v, false
		}
		dec[i] = b
	}
	// Members read raw: a number no float64 holds (1e400) is still JSON.
	var hdr map[string]json.RawMessage
	if json.Unmarshal(dec[0], &hdr) != nil {
		return v, false
	}
	isString := func(m json.RawMessage) bool {
		var s string
		return len(m) > 0 && m[0] == '"' && json.Unmarshal(m, &s) == nil
	}
	if !isString(hdr["alg"]) || len(segs) == 5 && !isString(hdr["enc"]) {
		return v, false
	}
	out := make([]string, len(segs))
	for i, b := range dec {
		out[i] = e.EncodeToString(b)
	}
	if string(hdr["b64"]) == "false" && len(segs) == 3 {
		out[1] = segs[1]
	}
	return strings.Join(out, "."), true
}
