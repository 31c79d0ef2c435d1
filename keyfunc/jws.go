package keyfunc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode"
)

// maxJOSEHeader is the longest protected header, in base64url, that
// canonicalJOSE decodes: a JOSE header is a few hundred bytes, several
// kilobytes with a certificate chain (x5c); a longer one leaves the value
// as it is, so that the cost of a hostile one is bounded.
const maxJOSEHeader = 16 << 10

// base64URL is the alphabet of unpadded base64url (RFC 4648 section 5).
const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// canonicalJOSE returns v in one spelling per token when v is structurally
// a JWS or JWE compact serialization (RFC 7515 and RFC 7516 section 7.1):
// three (JWS) or five (JWE) segments of base64url separated by dots, the
// first of which, the protected header, decodes to a JSON object with an
// "alg" member whose value is a string, and, for a JWE, an "enc" member
// too. Other segments may be empty (a detached payload, a JWE's encrypted
// key under direct encryption).
//
// The unused low bits of the last character of every segment are
// cleared: a lenient decoder (Go's base64.RawURLEncoding, so golang-jwt
// v5 and go-jose by default) ignores them, giving up to 16 spellings of
// each segment that decode alike. golang-jwt verifies a JWS's signature
// over its header and payload as sent, so that only the signature's
// spellings verify there; go-jose computes what is signed (a JWS's
// header and payload) and authenticated (a JWE's header) from the
// decoded bytes, so that every segment's spellings verify or decrypt as
// one token. Only a payload that is text, not base64url (RFC 7797: the
// header's "b64" is false), is kept as sent. Any other value, and a
// token already in that spelling, is returned as it is, so its digest is
// unchanged; only values whose segments decode alike meet, and distinct
// opaque tokens never do.
//
// go-jose's ParseSigned and ParseEncrypted (the parsers of go-jose v3's
// jwt package, deprecated in v4) also drop every white space character
// (unicode.IsSpace) before parsing: a value holding two or four dots and
// white space is keyed, when it is a JWS or JWE without the white space,
// as that token in its one spelling, and is otherwise kept as it is.
func canonicalJOSE(v string) string {
	if c, spaced, ok := spacedJOSE(v); spaced {
		if ok {
			return c
		}
		return v
	}
	c, _ := joseSpelling(v, false)
	return c
}

// spacedJOSE reports whether v holds white space and two or four dots,
// and whether it is a JWS or JWE once the white space is dropped (as
// go-jose v3's ParseSigned and ParseEncrypted drop it); if so, c is that
// token in the one spelling of canonicalJOSE.
func spacedJOSE(v string) (c string, spaced, ok bool) {
	if n := strings.Count(v, "."); (n != 2 && n != 4) || strings.IndexFunc(v, unicode.IsSpace) < 0 {
		return "", false, false
	}
	c, ok = joseSpelling(strings.Map(dropSpace, v), true)
	return c, true, ok
}

// mayStartJOSEHeader reports whether s, the first word of a value, can
// begin the base64url of a JOSE protected header, a JSON object: whether
// the first byte it encodes is '{' or JSON white space (a lone character
// holds six of its bits, which must allow one of those). It rules out
// the auth schemes (Bearer, DPoP, Basic, ...) cheaply, so that their
// credentials cost no second reading.
func mayStartJOSEHeader(s string) bool {
	if s == "" {
		return false
	}
	hi := strings.IndexByte(base64URL, s[0])
	if hi < 0 {
		return false
	}
	if len(s) == 1 {
		for _, b := range []byte("{ \t\n\r") {
			if int(b>>2) == hi {
				return true
			}
		}
		return false
	}
	lo := strings.IndexByte(base64URL, s[1])
	if lo < 0 {
		return false
	}
	switch byte(hi<<2 | lo>>4) {
	case '{', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// dropSpace is the strings.Map function dropping white space.
func dropSpace(r rune) rune {
	if unicode.IsSpace(r) {
		return -1
	}
	return r
}

// joseSpelling returns v in the one spelling of canonicalJOSE and whether
// v is a JWS or JWE; with check false, a value already in that spelling is
// returned as it is, unchecked (reported true).
func joseSpelling(v string, check bool) (string, bool) {
	var segs [5]string
	n := 0
	for rest := v; ; n++ {
		if n == len(segs) {
			return v, false // more than five segments
		}
		seg, after, more := strings.Cut(rest, ".")
		segs[n] = seg
		if !more {
			n++
			break
		}
		rest = after
	}
	if n != 3 && n != 5 {
		return v, false
	}
	respell := false
	for _, s := range segs[:n] {
		if m := unusedMask(len(s)); m != 0 {
			last := strings.IndexByte(base64URL, s[len(s)-1])
			respell = respell || last&m != 0 // a non-alphabet last (-1) fails below
		}
	}
	if !respell && !check {
		return v, true
	}
	hdr := segs[0]
	if hdr == "" || len(hdr) > maxJOSEHeader {
		return v, false
	}
	for _, s := range segs[:n] {
		if len(s)%4 == 1 || !isBase64URL(s) {
			return v, false
		}
	}
	h, err := base64.RawURLEncoding.DecodeString(hdr)
	if err != nil {
		return v, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(h, &members) != nil || !isJSONString(members["alg"]) || n == 5 && !isJSONString(members["enc"]) {
		return v, false
	}
	if !respell {
		return v, true
	}
	// RFC 7797: a JWS payload that is text, signed as sent.
	textPayload := n == 3 && bytes.Equal(bytes.TrimSpace(members["b64"]), []byte("false"))
	var b strings.Builder
	b.Grow(len(v))
	for i, s := range segs[:n] {
		if i > 0 {
			b.WriteByte('.')
		}
		if m := unusedMask(len(s)); m != 0 && !(textPayload && i == 1) {
			b.WriteString(s[:len(s)-1])
			b.WriteByte(base64URL[strings.IndexByte(base64URL, s[len(s)-1])&^m])
			continue
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// unusedMask returns the unused low bits of the last character of an
// unpadded base64url segment of length n: 4 when n is 2 mod 4, 2 when it
// is 3 mod 4, none otherwise.
func unusedMask(n int) int {
	switch n % 4 {
	case 2:
		return 0xf
	case 3:
		return 0x3
	}
	return 0
}

// isJSONString reports whether m, a JSON value, is a string.
func isJSONString(m json.RawMessage) bool {
	return len(m) > 0 && m[0] == '"'
}

// isBase64URL reports whether s holds only characters of unpadded
// base64url.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
