package keyfunc

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// maxJWSHeader is the longest protected header, in base64url, that
// canonicalJWS decodes: a JOSE header is a few hundred bytes, several
// kilobytes with a certificate chain (x5c); a longer one leaves the value
// as it is, so that the cost of a hostile one is bounded.
const maxJWSHeader = 16 << 10

// base64URL is the alphabet of unpadded base64url (RFC 4648 section 5).
const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// canonicalJWS returns v in one spelling per token when v is structurally
// a JWS compact serialization (RFC 7515 section 7.1): three segments of
// base64url separated by dots, the first of which, the protected header,
// decodes to a JSON object with an "alg" member whose value is a string
// (the payload may be empty, as a detached one is). The unused low bits of
// the signature's last character, which a lenient decoder (Go's
// base64.RawURLEncoding, so golang-jwt v5 by default) ignores, are
// cleared: up to 16 spellings that verify as one token. The header and
// payload need no such care: the signature covers them as sent, so their
// other spellings do not verify. Any other value, and a token already in
// that spelling, is returned as it is, so its digest is unchanged; only
// spellings of one signature meet, and distinct opaque tokens never do.
func canonicalJWS(v string) string {
	sig := v[strings.LastIndexByte(v, '.')+1:]
	var mask int
	switch len(sig) % 4 {
	case 2:
		mask = 0xf
	case 3:
		mask = 0x3
	default:
		return v // no unused bits (or no base64 at all)
	}
	last := strings.IndexByte(base64URL, sig[len(sig)-1])
	if last < 0 || last&mask == 0 {
		return v
	}
	hdr, rest, ok := strings.Cut(v, ".")
	if !ok || hdr == "" || len(hdr) > maxJWSHeader {
		return v
	}
	payload, _, ok := strings.Cut(rest, ".")
	if !ok || len(payload)+1+len(sig) != len(rest) {
		return v // not three segments
	}
	for _, seg := range [...]string{hdr, payload, sig} {
		if len(seg)%4 == 1 || !isBase64URL(seg) {
			return v
		}
	}
	h, err := base64.RawURLEncoding.DecodeString(hdr)
	if err != nil {
		return v
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(h, &members) != nil {
		return v
	}
	if alg := members["alg"]; len(alg) == 0 || alg[0] != '"' {
		return v
	}
	return v[:len(v)-1] + base64URL[last&^mask:last&^mask+1]
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
