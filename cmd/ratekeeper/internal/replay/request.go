package replay

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// A requestBuilder turns log entries into *http.Request values for the
// policies' key functions and matchers. It reuses one request: the policy
// Set keeps nothing of it between calls.
type requestBuilder struct {
	// route returns the path of the route pattern of a request, "" for
	// none; nil when no policy names routes.
	route func(*http.Request) string
	// pattern is route's answer for the request built last, which the
	// Set's pattern function returns (see pattern); r.Pattern is left
	// empty, as before routing.
	pattern string
	req     *http.Request
	url     url.URL
	hdr     http.Header
	base    context.Context
	// patterns caches route's answer per method and path (the routers
	// have no host patterns); cached counts its entries, at most
	// maxCached, and cachedBytes the bytes of their methods and paths, at
	// most maxCachedBytes.
	patterns    map[string]map[string]string
	cached      int
	cachedBytes int
	// ref and ua back the Referer and User-Agent values, set on most
	// lines, without an allocation each; extra tells that other headers
	// were set and must be cleared.
	ref, ua [1]string
	extra   bool
}

// set sets header name to v (deleting it when v is empty), reusing buf.
func (b *requestBuilder) set(name, v string, buf *[1]string) {
	if v == "" {
		delete(b.hdr, name)
		return
	}
	buf[0] = v
	b.hdr[name] = buf[:]
}

// maxCached and maxCachedBytes bound the pattern cache, in entries and in
// bytes of the methods and paths it keeps (a path may be 64 KiB long: a
// scanner's distinct long paths would otherwise fill it with gigabytes);
// paths past them are looked up each time.
const (
	maxCached      = 1 << 16
	maxCachedBytes = 8 << 20
)

func (b *requestBuilder) init(route func(*http.Request) string) {
	b.route = route
	b.patterns = map[string]map[string]string{}
	b.hdr = http.Header{}
	b.base = context.Background()
	b.req = (&http.Request{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "replay.invalid"}).WithContext(b.base)
}

// build returns the request of en: method, URL, RemoteAddr, the headers
// the log has and the user in the context (keyfunc.WithUser), and
// resolves its route pattern with the router (see newRouter), which the
// Set reads through patternFunc.
func (b *requestBuilder) build(en *logparse.Entry) *http.Request {
	r := b.req
	if en.User != "" {
		r = r.WithContext(keyfunc.WithUser(b.base, en.User))
	} else if r.Context() != b.base {
		r = r.WithContext(b.base)
	}
	b.req = r
	r.Method = en.Method
	b.url.Path, b.url.RawPath = en.Path, ""
	if strings.IndexByte(en.Path, '%') >= 0 {
		if p, err := url.PathUnescape(en.Path); err == nil {
			// As net/http's parse sets them: RawPath only when the
			// logged escapes are not those Go would write for Path
			// ("%C3%A9", "%20": RawPath empty, and chi routes on the
			// decoded path; "%2F", "%c3%a9": RawPath, routed on).
			b.url.Path = p
			if b.url.EscapedPath() != en.Path {
				b.url.RawPath = en.Path
			}
		}
	}
	b.url.RawQuery = en.Query
	r.URL = &b.url
	r.RequestURI = ""
	r.RemoteAddr = en.Addr
	if b.extra {
		clear(b.hdr)
		b.extra = false
	}
	b.set("Referer", en.Referer, &b.ref)
	b.set("User-Agent", en.UserAgent, &b.ua)
	for _, h := range en.Headers {
		b.hdr.Add(h.Name, h.Value)
		b.extra = true
	}
	r.Header = b.hdr
	r.Pattern = ""
	b.pattern = ""
	if b.route != nil {
		byPath := b.patterns[en.Method]
		pat, ok := byPath[en.Path]
		if !ok {
			pat = b.route(r)
			size := len(en.Path)
			if byPath == nil {
				size += len(en.Method)
			}
			if b.cached < maxCached && b.cachedBytes+size <= maxCachedBytes {
				if byPath == nil {
					byPath = map[string]string{}
					b.patterns[strings.Clone(en.Method)] = byPath
				}
				byPath[strings.Clone(en.Path)] = pat
				b.cached++
				b.cachedBytes += size
			}
		}
		b.pattern = pat
	}
	return r
}

// patternFunc returns the pattern function of the replay's Set: the
// route pattern build resolved for the request, as the middleware's
// pattern function around the application's router resolves it
// (policy.ServeMuxPattern, policy.ChiPattern), so that a request no route
// matches (a 404) is keyed by policy.NoRoute under a route key part, as
// there, rather than refused for want of a key. Only a replay that knows
// routes (b.route) has one: without, no request's route is known.
func (b *requestBuilder) patternFunc() func(*http.Request) string {
	return func(*http.Request) string { return b.pattern }
}
