package middleware

import "net/http"

// fieldNames are the fields that some profile writes (Retry-After and
// Cache-Control are not rate-limit fields: see DropRateLimitFields).
var fieldNames = [...]string{
	HeaderRateLimitPolicy, HeaderRateLimit,
	HeaderRateLimitLimit, HeaderRateLimitRemaining, HeaderRateLimitReset,
	HeaderXRateLimitLimit, HeaderXRateLimitRemaining, HeaderXRateLimitReset,
}

// DropRateLimitFields deletes from h every rate-limit field that a
// [Profile] of this package writes, whatever the profile: RateLimit,
// RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining,
// RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset, under a key of any ASCII case (a field name is an
// ASCII token: a key that only Unicode case folding matches to one of
// these names, "Ratelimit-Reſet", is not that field). Every other field
// stays, Retry-After and Cache-Control among them.
//
// It is for the header of a response that a handler behind the
// middleware passes on from elsewhere, so that the client reads the
// middleware's rate-limit fields alone (see the package doc, and
// [DropBackendRateLimitFields] for an httputil.ReverseProxy). Not on the
// header map of the ResponseWriter the middleware passed on: that holds
// the middleware's own fields, set before the handler runs.
func DropRateLimitFields(h http.Header) {
	for k := range h {
		for _, f := range fieldNames {
			if equalFoldASCII(k, f) {
				delete(h, k)
				break
			}
		}
	}
}

// DropBackendRateLimitFields returns a function for the ModifyResponse
// of an httputil.ReverseProxy behind the middleware: it deletes the
// backend's rate-limit fields from the response ([DropRateLimitFields]),
// then calls modify, unless it is nil, and returns its error. The client
// then reads the middleware's rate-limit fields alone, under every
// profile, as it would without the proxy, where the backend's would add
// values to them (see the package doc); not after a backend's 103 Early
// Hints, though (see below). To keep a ModifyResponse already set, wrap
// it:
//
//	proxy.ModifyResponse = middleware.DropBackendRateLimitFields(proxy.ModifyResponse)
//
// modify sees the response without the backend's rate-limit fields.
//
// The backend's Retry-After stays, on its 429, its 503 or any status: it
// is the backend's answer to this very request, which the middleware
// admitted and so sent no Retry-After of its own for, and a client that
// retries sooner is likely refused again. Such a 429 reaches the client
// with the backend's Retry-After and body and the middleware's rate-limit
// fields, whose room left is the middleware's, not the backend's. The
// body and every other field of the backend's response are passed on
// unchanged, and its trailers too (only the header is changed).
//
// An informational response (103 Early Hints) is not changed either:
// ReverseProxy passes it on without ModifyResponse, with the middleware's
// fields and any the backend's 103 carries (a backend behind ratekeeper
// sets its own before its handler writes the 103). ReverseProxy then
// clears the response's header map (see the package doc), so after a
// backend's 103 the final response carries no rate-limit field at all:
// the middleware's are gone, and the backend's are dropped here.
func DropBackendRateLimitFields(modify func(*http.Response) error) func(*http.Response) error {
	return func(resp *http.Response) error {
		DropRateLimitFields(resp.Header)
		if modify == nil {
			return nil
		}
		return modify(resp)
	}
}

// equalFoldASCII reports whether s and t are equal under ASCII case
// folding alone, as field names compare (strings.EqualFold also folds
// non-ASCII letters onto ASCII ones: "ſ" onto "s", "K" onto "k").
func equalFoldASCII(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
