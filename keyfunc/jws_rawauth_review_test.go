package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestRawJOSEInAuthorizationWithWhiteSpaceIsTheToken: a JWS or JWE sent
// as the whole Authorization value, with no auth scheme (a raw token, as
// some APIs take it there), is a credential header's whole value, which
// Header's doc keys as the token once the white space inside it is
// dropped, as go-jose's ParseSigned and ParseEncrypted drop it. A space
// inside such a token must not read as the end of an auth scheme: each
// place a client could put one would otherwise be a fresh key for one
// token.
func TestRawJOSEInAuthorizationWithWhiteSpaceIsTheToken(t *testing.T) {
	tok := jws(`{"alg":"ES256","kid":"k"}`, `{"sub":"bob"}`, 64)
	tokJWE := jwe(`{"alg":"RSA-OAEP","enc":"A256GCM"}`, 256, 12, 37, 16)
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		f := keyfunc.Must(keyfunc.Header(name))
		for _, c := range []struct {
			canon string
			vs    []string
		}{
			{tok, []string{tok[:10] + " " + tok[10:], tok[:40] + " \t" + tok[40:], strings.ReplaceAll(tok, ".", " . "), tok[:1] + "  " + tok[1:]}},
			{tokJWE, []string{tokJWE[:3] + " " + tokJWE[3:], strings.ReplaceAll(tokJWE, ".", ". ")}},
		} {
			want, err := f(newReq("192.0.2.1:1", name, c.canon))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.vs {
				if got, err := f(newReq("192.0.2.1:1", name, v)); err != nil || got != want {
					t.Errorf("%s: %q: key %q, %v; want %q, the raw token's", name, v, got, err, want)
				}
			}
		}
	}
	// A scheme and its credentials stay apart from the same text without
	// the space, and a first word that only looks like the start of a
	// token keeps its scheme reading.
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	for _, v := range []string{"Bearer " + tok, "eyJ " + tok[3:20], "Concealed " + tok} {
		a, _ := f(newReq("192.0.2.1:1", "Authorization", v))
		b, _ := f(newReq("192.0.2.1:1", "Authorization", strings.ReplaceAll(v, " ", "")))
		if a == b {
			t.Errorf("Authorization %q and without its space share the key %q; want two keys", v, a)
		}
	}
}
