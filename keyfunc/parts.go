package keyfunc

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Header returns a Func whose key is the first value of the request header
// name, without the white space around it (RFC 9110 section 5.5), which
// net/http trims off HTTP/1.1 values but passes on over HTTP/2. The value is the client's to choose: use it for identities the
// server checks elsewhere (an API key), not for anything a client could
// rotate to escape a limit unless another part of the key (the IP) bounds
// it. A missing or empty header yields an error matching [ErrNoKey] and
// naming the header.
//
// A header whose name marks a credential is keyed by its digest, as
// [Secret] writes it ([HashLen] characters), never as sent, so that the
// store, its dumps and logs of keys hold no credential: Authorization,
// Proxy-Authorization, Cookie, and any name holding auth, token, secret,
// pass, pwd, sess, credential, key, jwt, bearer, logged_in or remember in
// any case (X-Api-Key, X-Auth-Token, X-Session-Id, X-Passphrase,
// wordpress_logged_in_…, remember_web_…), ending in sid or starting with
// __Secure-, __Host-, .AspNetCore. (ASP.NET Core's authentication
// cookies) or wordpress_ (WordPress's). The auth scheme of Authorization
// and Proxy-Authorization, case-insensitive, is hashed in one spelling
// ("bearer  t" as "Bearer t"), and so are Basic credentials (re-encoded
// in base64 as net/http decodes them), so that respelling one credential
// gets no fresh key. For the same reason a credential that is a JWS
// compact serialization (a signed JWT: three base64url segments, the
// first decoding to a JSON object with a string "alg") or a JWE one (an
// encrypted JWT: five, with a string "enc" too), after any auth scheme
// but Basic or as a credential header's or cookie's whole value, is
// hashed with the unused low bits of the last character of each of its
// segments cleared: golang-jwt v5 and go-jose, by default, ignore them
// when they decode, and go-jose verifies and decrypts what it decoded,
// re-encoded, so up to 16 spellings of each segment are one token to it
// (golang-jwt signs a JWS's header and payload as sent, and only the
// signature's spellings verify there). A payload that is text (RFC 7797,
// "b64": false) is left as sent. A value that is such a token once the
// white space inside it is dropped, as go-jose's ParseSigned and
// ParseEncrypted (v3's jwt package) drop it, is keyed as that token. The
// spelling issuers write keeps its
// digest, and nothing else is respelled: neither a value of another
// shape nor a token whose protected header is over 16 KiB of base64url,
// which is not decoded.
//
// This is the rule of a policy file's header: and cookie: parts,
// which therefore give the same keys. Wrapping such a Func in Secret
// again is harmless but needless: the key is then the digest of the
// digest, as unreadable, one per credential, but not the key Header gives
// alone (nor the one Secret(Header(name)) gave before Header hashed), so
// drop the Secret to keep the keys a store already holds. A name marked
// wrongly only makes its keys unreadable; to key by such a header as sent,
// write the Func ([Func] is a plain function). Other headers (X-User,
// X-Tenant) are returned as they are: compose them with [Join] or
// [Namespace] to bound their length.
//
// Header("Host") reads r.Host, where net/http moves the Host header of an
// incoming request (the header map no longer holds it).
//
// An invalid header name is an error.
func Header(name string) (Func, error) {
	if !validHeaderName(name) {
		return nil, fmt.Errorf("keyfunc: Header: %q is not a valid header name", name)
	}
	key := http.CanonicalHeaderKey(name)
	missing := noKey("keyfunc: no " + key + " header")
	if credential(name) {
		auth := key == "Authorization" || key == "Proxy-Authorization"
		return func(r *http.Request) (string, error) {
			vs := r.Header[key]
			if len(vs) == 0 {
				return "", missing
			}
			v := trimOWS(vs[0])
			if v == "" {
				return "", missing
			}
			if auth {
				v = authCredentials(v)
			} else {
				v = canonicalJOSE(v)
			}
			return digest(v), nil
		}, nil
	}
	if key == "Host" {
		return func(r *http.Request) (string, error) {
			if r.Host == "" {
				return "", missing
			}
			return r.Host, nil
		}, nil
	}
	return func(r *http.Request) (string, error) {
		vs := r.Header[key]
		if len(vs) == 0 {
			return "", missing
		}
		if v := trimOWS(vs[0]); v != "" {
			return v, nil
		}
		return "", missing
	}, nil
}

// Cookie returns a Func whose key is the value of the named cookie. Like
// [Header], the value is the client's to choose. A missing or empty cookie
// yields an error matching [ErrNoKey] and naming the cookie.
//
// A cookie whose name marks a credential by Header's rule (session,
// session_id, sid, connect.sid, jwt, auth_token, __Host-id,
// .AspNetCore.Cookies, wordpress_sec_…, remember_web_…) is keyed by
// its digest, as [Secret] writes it, never as sent (a JWT in one
// spelling, as for Header); wrapping it in Secret
// again is harmless but needless, as for Header. Other cookies (theme,
// lang) are returned as they are.
//
// An invalid cookie name is an error.
func Cookie(name string) (Func, error) {
	if !validHeaderName(name) {
		return nil, fmt.Errorf("keyfunc: Cookie: %q is not a valid cookie name", name)
	}
	missing := noKey("keyfunc: no " + name + " cookie")
	hash := credential(name)
	return func(r *http.Request) (string, error) {
		c, err := r.Cookie(name)
		if err != nil || c.Value == "" {
			return "", missing
		}
		if hash {
			return digest(canonicalJOSE(c.Value)), nil
		}
		return c.Value, nil
	}, nil
}

// Method returns a Func whose key is the request method. The methods of
// RFC 9110 and PATCH are returned as they are, but for HEAD, which is
// "GET": routers serve a HEAD with the GET handler (ServeMux does, chi
// with its GetHead middleware), and a client alternating the two must not
// get two limits for one handler. Without GetHead, chi answers a HEAD to a
// GET-only route 405 Method Not Allowed, and a limiter installed with
// r.Use (it runs before chi routes) still counts that request, keyed
// "GET" by Method; one installed with r.With on the route is not reached.
// Any other method, which a client may invent at will, becomes "OTHER", so
// that the method cannot multiply the number of keys.
func Method() Func {
	return func(r *http.Request) (string, error) {
		switch r.Method {
		case "", http.MethodGet, http.MethodHead:
			return http.MethodGet, nil
		case http.MethodPost, http.MethodPut, http.MethodPatch,
			http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
			return r.Method, nil
		}
		return "OTHER", nil
	}
}

// GlobalKey is the key of [Global].
const GlobalKey = "*"

// Global returns a Func whose key is always [GlobalKey]: one bucket for all
// requests, for limits on the server as a whole. Wrap it with [Namespace]
// so that two global policies stay apart.
func Global() Func {
	return func(*http.Request) (string, error) { return GlobalKey, nil }
}

// Const returns a Func whose key is always s, for example to give a group
// of routes one shared bucket. s must not be empty.
func Const(s string) (Func, error) {
	if s == "" {
		return nil, fmt.Errorf("keyfunc: Const: empty key")
	}
	return func(*http.Request) (string, error) { return s, nil }, nil
}

// authCredentials returns an Authorization (or Proxy-Authorization) value
// in one spelling per credential. Its auth scheme is case-insensitive and
// one or more spaces follow it (RFC 9110 section 11.4), and net/http's
// Request.BasicAuth accepts "basic" as "Basic": the scheme is written as
// http.CanonicalHeaderKey writes a name ("Bearer", "Basic"), then one
// space, then the rest as sent. The usual spelling is returned as it is
// (its digest is unchanged), and so is a value without a space or whose
// first word is no token: a raw key some APIs take there, case-sensitive
// (but for a JWS or JWE, below).
//
// The last 4-character group of Basic credentials is re-encoded when it
// decodes: Request.BasicAuth decodes with base64.StdEncoding, which
// ignores the unused low bits of the last character before "=" padding,
// so that up to 16 spellings are one user and password to it. Only that
// group can differ, and decoding only it keeps a long header cheap. The
// credentials of any other scheme (Bearer, DPoP), and a value without a
// scheme, are respelled by canonicalJOSE when they are a JWS or JWE; so
// is the whole value when it is a JWS or JWE with white space inside (a
// raw token, with no scheme, whose first word only looks like one).
func authCredentials(v string) string {
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !validHeaderName(scheme) {
		return canonicalJOSE(v)
	}
	if mayStartJOSEHeader(scheme) {
		// A raw JWS or JWE with a space inside: its first word is no
		// scheme but the start of its header.
		if c, _, ok := spacedJOSE(v); ok {
			return c
		}
	}
	canon, creds := http.CanonicalHeaderKey(scheme), strings.TrimLeft(rest, " ")
	if n := len(creds); canon == "Basic" && n >= 4 && n%4 == 0 {
		q := creds[n-4:]
		if b, err := base64.StdEncoding.DecodeString(q); err == nil {
			if e := base64.StdEncoding.EncodeToString(b); e != q {
				creds = creds[:n-4] + e
			}
		}
	} else if canon != "Basic" {
		creds = canonicalJOSE(creds)
	}
	if canon == scheme && creds == rest {
		return v
	}
	return canon + " " + creds
}

// validHeaderName reports whether s is a non-empty RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
