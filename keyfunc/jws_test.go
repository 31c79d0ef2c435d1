package keyfunc_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// jws returns a JWS compact serialization (RFC 7515 section 7.1) of the
// given protected header and payload with a signature of sigLen bytes,
// each segment in unpadded base64url with its unused bits zero.
func jws(header, payload string, sigLen int) string {
	sig := make([]byte, sigLen)
	for i := range sig {
		sig[i] = byte(7*i + 3)
	}
	e := base64.RawURLEncoding
	return e.EncodeToString([]byte(header)) + "." + e.EncodeToString([]byte(payload)) + "." + e.EncodeToString(sig)
}

// respellings returns the spellings of v that differ from it in the unused
// low bits of its last character, as an unpadded base64url segment: 15 when
// its length is 2 mod 4, 3 when it is 3 mod 4.
func respellings(v string) []string {
	unused := map[int]int{2: 4, 3: 2}[len(v)%4]
	last := strings.IndexByte(b64url, v[len(v)-1])
	var out []string
	for low := 1; low < 1<<unused; low++ {
		out = append(out, v[:len(v)-1]+string(b64url[last|low]))
	}
	return out
}

// TestJWSSignatureSpellingsShareOneKey: golang-jwt v5, by default, decodes
// a token's segments with base64.RawURLEncoding, which ignores the unused
// low bits of a segment's last character, and verifies the signature over
// the header and payload as sent: changing those bits of the signature's
// last character gives up to 16 spellings that verify as one token (4 for
// HS256's 32-byte signature, 16 for ES256's 64 or RS256's 256 bytes), each
// a bucket of its own. Every spelling of a JWS is keyed as its one
// canonical spelling, whose key is the digest it always had, wherever
// a credential is hashed: Authorization with or without a scheme,
// Proxy-Authorization, a credential header, a credential cookie.
func TestJWSSignatureSpellingsShareOneKey(t *testing.T) {
	auth := keyfunc.Must(keyfunc.Header("Authorization"))
	proxy := keyfunc.Must(keyfunc.Header("Proxy-Authorization"))
	xauth := keyfunc.Must(keyfunc.Header("X-Auth-Token"))
	cookie := keyfunc.Must(keyfunc.Cookie("jwt"))
	for _, tok := range []string{
		jws(`{"alg":"HS256","typ":"JWT"}`, `{"sub":"alice"}`, 32),
		jws(`{"alg":"ES256","kid":"k1"}`, `{"sub":"bob","n":1}`, 64),
		jws(`{"alg":"RS256"}`, `{"sub":"carol"}`, 256),
		jws(` { "typ" : "JWT" , "alg" : "EdDSA" } `, `{}`, 64),
		jws(`{"alg":"HS256","b64":false,"crit":["b64"]}`, ``, 32), // detached payload
	} {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		e := base64.RawURLEncoding
		want, _ := e.DecodeString(sig)
		for _, c := range []struct {
			name string
			f    keyfunc.Func
			r    func(v string) *http.Request
		}{
			{"Bearer", auth, func(v string) *http.Request { return newReq("192.0.2.1:1", "Authorization", "Bearer "+v) }},
			{"bearer", auth, func(v string) *http.Request { return newReq("192.0.2.1:1", "Authorization", "bearer  "+v) }},
			{"DPoP", auth, func(v string) *http.Request { return newReq("192.0.2.1:1", "Authorization", "DPoP "+v) }},
			{"no scheme", auth, func(v string) *http.Request { return newReq("192.0.2.1:1", "Authorization", v) }},
			{"Proxy-Authorization", proxy, func(v string) *http.Request { return newReq("192.0.2.1:1", "Proxy-Authorization", "Bearer "+v) }},
			{"X-Auth-Token", xauth, func(v string) *http.Request { return newReq("192.0.2.1:1", "X-Auth-Token", v) }},
			{"cookie", cookie, func(v string) *http.Request { return newReq("192.0.2.1:1", "Cookie", "jwt="+v) }},
		} {
			canon, err := c.f(c.r(tok))
			if err != nil {
				t.Fatal(err)
			}
			spellings := respellings(sig)
			if len(spellings) == 0 && len(sig)%4 != 0 {
				t.Fatalf("no respellings of %q", sig)
			}
			for _, s := range spellings {
				if got, err := e.DecodeString(s); err != nil || string(got) != string(want) {
					t.Fatalf("signature %q decodes to %x, %v; the test needs a spelling of %x", s, got, err, want)
				}
				v := tok[:len(tok)-len(sig)] + s
				if got, err := c.f(c.r(v)); err != nil || got != canon {
					t.Errorf("%s: key of %q = %q, %v; want %q, the key of %q, which decodes to the same signature", c.name, v, got, err, canon, tok)
				}
			}
		}
		// The canonical spelling keeps the digest it had: a store's keys
		// for tokens as issuers write them do not change.
		got, err := auth(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok))
		before, _ := keyfunc.Secret(constF("Bearer " + tok))(nil)
		if err != nil || got != before {
			t.Errorf("key of the canonical spelling = %q, %v; want its digest as before, %q", got, err, before)
		}
	}
}

// TestJWSRuleMergesNothingElse: only a value that is structurally a JWS
// (three base64url segments, the first decoding to a JSON object with a
// string "alg") is respelled, and only in the unused bits of its last
// character, so that distinct opaque tokens keep distinct keys.
func TestJWSRuleMergesNothingElse(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	e := base64.RawURLEncoding
	h := e.EncodeToString([]byte(`{"alg":"HS256"}`))
	p := e.EncodeToString([]byte(`{"sub":"alice"}`))
	s := e.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	// Each last segment's length is 3 mod 4 (s has 43 characters), but
	// for the padded and the misfit ones, so that flipping its last
	// character's lowest bit is what the rule would forgive.
	for _, v := range []string{
		h + "." + s,                               // two segments
		h + "." + p + "." + s + "." + s,           // four
		h + "." + p + "." + s + "." + s + "." + s, // five (a JWE is no JWS)
		e.EncodeToString([]byte(`{"typ":"JWT"}`)) + "." + p + "." + s,   // no alg
		e.EncodeToString([]byte(`{"ALG":"HS256"}`)) + "." + p + "." + s, // not "alg"
		e.EncodeToString([]byte(`{"alg":1}`)) + "." + p + "." + s,       // alg not a string
		e.EncodeToString([]byte(`["alg"]`)) + "." + p + "." + s,         // not an object
		e.EncodeToString([]byte(`{"alg":"HS256"`)) + "." + p + "." + s,  // not JSON
		e.EncodeToString([]byte(`"alg"`)) + "." + p + "." + s,
		"opaque.token." + s,
		h + "." + p + "." + s + "=", // padded
		h + "." + p + "." + strings.ReplaceAll(s, "_", "/") + "+", // not base64url
		h + ".a+b/." + s,             // a payload not base64url
		"." + p + "." + s,            // no header
		h + "." + p + "." + s + "AA", // no base64 length
	} {
		last := v[len(v)-1]
		i := strings.IndexByte(b64url, last)
		if i < 0 {
			i = 0
		}
		w := v[:len(v)-1] + string(b64url[i^1])
		a, err1 := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+v))
		b, err2 := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+w))
		if err1 != nil || err2 != nil || a == b {
			t.Errorf("keys of %q and %q = %q, %v and %q, %v; want two keys (not a JWS)", v, w, a, err1, b, err2)
		}
	}
	// A JWS's signatures that decode to different bytes keep apart.
	tok := jws(`{"alg":"HS256"}`, `{"sub":"alice"}`, 32) // 43 characters: 2 unused bits
	i := strings.IndexByte(b64url, tok[len(tok)-1])
	other := tok[:len(tok)-1] + string(b64url[i^4])
	a, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok))
	b, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+other))
	if a == b {
		t.Errorf("%q and %q, whose signatures decode apart, share the key %q", tok, other, a)
	}
	// So do payloads that decode apart.
	c, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+jws(`{"alg":"HS256"}`, `{"sub":"alicf"}`, 32)))
	if a == c {
		t.Errorf("two tokens of different payloads share the key %q", a)
	}
	// Other headers keep their values whole.
	k := keyfunc.Must(keyfunc.Header("X-Tenant"))
	x, _ := k(newReq("192.0.2.1:1", "X-Tenant", tok))
	if x != tok {
		t.Errorf("Header(X-Tenant) over a JWS = %q; want it as sent", x)
	}
}

// TestJWSHeaderBound: the protected header is decoded only up to 16 KiB of
// base64url (a certificate chain fits), so that a hostile value's cost is
// bounded; a token with a longer header keeps its spellings apart.
func TestJWSHeaderBound(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	for _, tc := range []struct {
		pad   int
		merge bool
	}{
		{12000 - 20, true}, // 16,000 characters
		{12300, false},     // 16,428 characters
	} {
		tok := jws(`{"alg":"RS256","x5c":"`+strings.Repeat("A", tc.pad)+`"}`, `{}`, 256)
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		a, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok))
		b, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok[:len(tok)-len(sig)]+respellings(sig)[0]))
		if (a == b) != tc.merge {
			t.Errorf("header of %d characters: spellings share a key: %v; want %v", strings.IndexByte(tok, '.'), a == b, tc.merge)
		}
	}
}

// TestJWSCanonicalCostsNoMore: a token in its canonical spelling, the one
// issuers write, costs what any credential of its length does: no
// decoding, no allocation more.
func TestJWSCanonicalCostsNoMore(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	tok := jws(`{"alg":"ES256"}`, `{"sub":"alice"}`, 64)
	r := newReq("192.0.2.1:1", "Authorization", "Bearer "+tok)
	o := newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Repeat("x", len(tok)))
	opaque := testing.AllocsPerRun(100, func() { sinkKey, _ = f(o) })
	if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got > opaque {
		t.Fatalf("Header(Authorization) over a canonical JWS: %v allocations; want at most %v, an opaque token's", got, opaque)
	}
}

// jwe returns a JWE compact serialization (RFC 7516 section 7.1) of the
// given protected header, with an encrypted key, initialization vector,
// ciphertext and tag of the given lengths, each in unpadded base64url
// with its unused bits zero.
func jwe(header string, lens ...int) string {
	e := base64.RawURLEncoding
	segs := []string{e.EncodeToString([]byte(header))}
	for k, n := range lens {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(11*i + 5*k + 1)
		}
		segs = append(segs, e.EncodeToString(b))
	}
	return strings.Join(segs, ".")
}

// TestJWESpellingsShareOneKey: a JWE's encrypted key, initialization
// vector, ciphertext and tag are decoded as leniently as a JWS's
// signature (go-jose decodes with base64.RawURLEncoding): each of those
// four segments has up to 16 spellings of its last character, 65,536 of
// one token. They share the key of the canonical spelling,
// which keeps the digest it had; a five-segment value whose header has no
// string "enc" is no JWE.
func TestJWESpellingsShareOneKey(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	for _, tok := range []string{
		jwe(`{"alg":"RSA-OAEP","enc":"A256GCM"}`, 256, 12, 37, 16),
		jwe(`{"alg":"dir","enc":"A128CBC-HS256"}`, 0, 16, 50, 16), // no encrypted key
	} {
		canon, err := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok))
		before, _ := keyfunc.Secret(constF("Bearer " + tok))(nil)
		if err != nil || canon != before {
			t.Fatalf("key of the canonical %q = %q, %v; want its digest as before, %q", tok, canon, err, before)
		}
		segs := strings.Split(tok, ".")
		all := append([]string(nil), segs...)
		n := 0
		for i := 1; i < len(segs); i++ {
			if segs[i] == "" {
				continue
			}
			for _, s := range respellings(segs[i]) {
				v := append([]string(nil), segs...)
				v[i] = s
				n++
				if got, err := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Join(v, "."))); err != nil || got != canon {
					t.Errorf("segment %d respelled %q: key %q, %v; want %q", i, s, got, err, canon)
				}
				all[i] = s
			}
		}
		if n == 0 {
			t.Fatalf("%q: no segment to respell", tok)
		}
		if got, err := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Join(all, "."))); err != nil || got != canon {
			t.Errorf("every segment respelled: key %q, %v; want %q", got, err, canon)
		}
		// A header that decodes otherwise is another token (the
		// header's own spellings share the key: see
		// TestJOSEEverySegmentSpellingSharesOneKey).
		segs[0] = "X" + segs[0][1:]
		if got, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Join(segs, "."))); got == canon {
			t.Errorf("header changed: key %q; want another", got)
		}
	}
	// No "enc", or not a string: not a JWE.
	for _, h := range []string{`{"alg":"RSA-OAEP"}`, `{"alg":"RSA-OAEP","enc":1}`, `{"enc":"A256GCM"}`} {
		tok := jwe(h, 256, 12, 37, 16)
		segs := strings.Split(tok, ".")
		v := append([]string(nil), segs...)
		v[4] = respellings(segs[4])[0]
		a, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+tok))
		b, _ := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Join(v, ".")))
		if a == b {
			t.Errorf("header %s: two spellings share the key %q; want two keys (not a JWE)", h, a)
		}
	}
}

// TestJOSEEverySegmentSpellingSharesOneKey: go-jose (v2 to v4) decodes
// every segment of a compact JWS or JWE with base64.RawURLEncoding, which
// ignores the unused low bits of a segment's last character, and then
// computes what is signed (a JWS's header.payload) or authenticated (a
// JWE's header, its additional data) from the decoded bytes, re-encoded:
// not as sent. So with go-jose the header's and the payload's spellings
// verify or decrypt as one token as well as the signature's do: up to
// 16 x 16 x 16 spellings of a JWS, each a bucket of its own unless all
// share the canonical spelling's key. A JWS whose payload is not
// base64url-encoded (RFC 7797, "b64": false) is signed as sent: its
// payload is text, and two texts stay apart.
func TestJOSEEverySegmentSpellingSharesOneKey(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("Authorization"))
	key := func(segs []string) string {
		t.Helper()
		k, err := f(newReq("192.0.2.1:1", "Authorization", "Bearer "+strings.Join(segs, ".")))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tok := range []string{
		// Header of 34 characters (4 unused bits), payload of 18 (4),
		// signature of 86 (4).
		jws(`{"alg":"ES256","kid":"k"}`, `{"sub":"bob"}`, 64),
		// 35 (2), 30 (4), 43 (2).
		jws(`{"alg":"EdDSA","kid":"k1"}`, `{"sub":"alice","n":12}`, 32),
		jwe(`{"alg":"RSA-OAEP","enc":"A256GCM","k":1}`, 256, 12, 37, 16),
	} {
		segs := strings.Split(tok, ".")
		canon := key(segs)
		for i := 0; i < 2; i++ {
			if len(respellings(segs[i])) == 0 {
				t.Fatalf("%q: segment %d has no unused bits; the test needs some", tok, i)
			}
			for _, s := range respellings(segs[i]) {
				v := append([]string(nil), segs...)
				v[i] = s
				if got := key(v); got != canon {
					t.Errorf("segment %d of %q respelled %q: key %q; want %q, the canonical spelling's", i, tok, s, got, canon)
				}
			}
		}
	}
	// RFC 7797: "b64": false, a payload signed as the text it is.
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","b64":false,"crit":["b64"]}`))
	sig := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	if a, b := key([]string{h, "abc", sig}), key([]string{h, "abd", sig}); a == b {
		t.Errorf("b64 false: payloads abc and abd share the key %q; want two keys", a)
	}
}

// TestJOSEWhitespaceSpellingsShareOneKey: go-jose's ParseSigned and
// ParseEncrypted (the parsers of go-jose v3's jwt package, deprecated in
// v4) drop every white space character of a token before parsing it, so a
// JWS or JWE with spaces or tabs inside it (not at its ends, which the
// header's trimming drops) verifies as the same token: without limit, one
// key per spacing. A value with white space inside is keyed as the token
// it is once that is dropped, when it is one; another value keeps its
// white space and its key.
func TestJOSEWhitespaceSpellingsShareOneKey(t *testing.T) {
	auth := keyfunc.Must(keyfunc.Header("Authorization"))
	xauth := keyfunc.Must(keyfunc.Header("X-Auth-Token"))
	tok := jws(`{"alg":"ES256","kid":"k"}`, `{"sub":"bob"}`, 64)
	tokJWE := jwe(`{"alg":"RSA-OAEP","enc":"A256GCM"}`, 256, 12, 37, 16)
	for _, c := range []struct {
		canon string
		vs    []string
	}{
		{tok, []string{tok[:10] + " " + tok[10:], tok[:40] + "\t \t" + tok[40:], strings.ReplaceAll(tok, ".", " . ")}},
		{tokJWE, []string{tokJWE[:3] + " " + tokJWE[3:]}},
	} {
		wantAuth, _ := auth(newReq("192.0.2.1:1", "Authorization", "Bearer "+c.canon))
		wantX, _ := xauth(newReq("192.0.2.1:1", "X-Auth-Token", c.canon))
		for _, v := range c.vs {
			if got, err := auth(newReq("192.0.2.1:1", "Authorization", "Bearer "+v)); err != nil || got != wantAuth {
				t.Errorf("Authorization: Bearer %q: key %q, %v; want %q, the token's", v, got, err, wantAuth)
			}
			if got, err := xauth(newReq("192.0.2.1:1", "X-Auth-Token", v)); err != nil || got != wantX {
				t.Errorf("X-Auth-Token %q: key %q, %v; want %q, the token's", v, got, err, wantX)
			}
		}
	}
	// No token without its white space: kept as sent.
	for _, v := range []string{"opaque token.with.dots", "a b", "x.y. z"} {
		a, _ := xauth(newReq("192.0.2.1:1", "X-Auth-Token", v))
		b, _ := xauth(newReq("192.0.2.1:1", "X-Auth-Token", strings.ReplaceAll(v, " ", "")))
		if a == b {
			t.Errorf("X-Auth-Token %q and without its spaces share the key %q; want two keys (no token)", v, a)
		}
	}
}
