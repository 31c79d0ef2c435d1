package keyfunc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// Benchmarks compare keyfunc with httprate's KeyByIP and chi's client-IP
// middlewares in the same run. chi's middlewares store the IP in a new
// request context, so their numbers include that (r.WithContext and
// context.WithValue): it is what a request pays to use them.

var sinkKey string

func benchFunc(b *testing.B, f keyfunc.Func, r *http.Request) {
	b.ReportAllocs()
	if _, err := f(r); err != nil {
		b.Fatalf("key: %v", err)
	}
	for b.Loop() {
		sinkKey, _ = f(r)
	}
}

// benchChi measures a chi client-IP middleware followed by a read of the
// IP it stored.
func benchChi(b *testing.B, mw func(http.Handler) http.Handler, r *http.Request) {
	b.ReportAllocs()
	var got netip.Addr
	h := mw(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = middleware.GetClientIPAddr(r.Context())
	}))
	w := httptest.NewRecorder()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
	sinkKey = got.String()
}

// BenchmarkRemoteAddr is the common case: a server the internet reaches
// directly, keyed by the peer address.
func BenchmarkRemoteAddr(b *testing.B) {
	for _, a := range []struct{ name, addr string }{
		{"v4", "192.0.2.1:1234"},
		{"v6", "[2001:db8:1:2::7]:443"},
	} {
		r := newReq(a.addr)
		b.Run("addr="+a.name+"/impl=keyfunc", func(b *testing.B) { benchFunc(b, mustIP(b), r) })
		b.Run("addr="+a.name+"/impl=httprate.KeyByIP", func(b *testing.B) {
			//lint:ignore SA1019 the deprecated KeyByIP is the peer measured here.
			benchFunc(b, httprate.KeyByIP, r)
		})
		b.Run("addr="+a.name+"/impl=chi.ClientIPFromRemoteAddr", func(b *testing.B) {
			benchChi(b, middleware.ClientIPFromRemoteAddr, r)
		})
	}
}

// xffChain returns an X-Forwarded-For value of n entries: a client, then
// n-1 trusted proxies.
func xffChain(n int) string {
	var sb strings.Builder
	sb.WriteString("203.0.113.5")
	for i := 1; i < n; i++ {
		sb.WriteString(", 10.0.0.9")
	}
	return sb.String()
}

// hostile returns an attacker's X-Forwarded-For of about size bytes.
func hostile(kind string, size int) string {
	switch kind {
	case "trusted-entries": // looks like a very long trusted chain
		return strings.Repeat("10.0.0.9,", size/9-1) + "10.0.0.9"
	case "commas":
		return strings.Repeat(",", size)
	default: // one giant entry
		return strings.Repeat("9", size)
	}
}

// BenchmarkXFF sweeps the length of X-Forwarded-For, which the client
// controls: 1, 10 and 100 hops, and 64 KiB of hostile header (one long
// trusted-looking chain, commas, one giant entry, or blank lines). keyfunc
// examines at most MaxHops entries (32 by default; the 100-hop case sets
// MaxHops(128) to measure a real walk), so the hostile cases stop early.
func BenchmarkXFF(b *testing.B) {
	trusted := keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))
	kf := mustIP(b, trusted, keyfunc.MaxHops(128))
	kfDefault := mustIP(b, trusted)
	chiXFF := middleware.ClientIPFromXFF("10.0.0.0/8")
	for _, hops := range []int{1, 10, 100} {
		r := newReq("10.0.0.1:80", xff, xffChain(hops))
		name := "hops=" + itoa(hops)
		b.Run(name+"/impl=keyfunc", func(b *testing.B) { benchFunc(b, kf, r) })
		b.Run(name+"/impl=chi.ClientIPFromXFF", func(b *testing.B) { benchChi(b, chiXFF, r) })
	}
	for _, kind := range []string{"trusted-entries", "commas", "one-entry", "blank-lines"} {
		r := newReq("10.0.0.1:80", xff, hostile(kind, 64<<10))
		if kind == "blank-lines" {
			// "X-Forwarded-For:\r\n" is 17 bytes on the wire; net/http keeps
			// each such line as an empty value.
			r.Header[xff] = make([]string, (64<<10)/17)
		}
		name := "hostile64KiB=" + kind
		b.Run(name+"/impl=keyfunc", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkKey, _ = kfDefault(r) // an error by design: no client found
			}
		})
		b.Run(name+"/impl=chi.ClientIPFromXFF", func(b *testing.B) { benchChi(b, chiXFF, r) })
	}
	// chi's deprecated RealIP takes the leftmost entry (spoofable); listed
	// for its cost only.
	r := newReq("10.0.0.1:80", xff, xffChain(10))
	b.Run("hops=10/impl=chi.RealIP+keyfunc", func(b *testing.B) {
		//lint:ignore SA1019 the deprecated RealIP is the peer measured here.
		h := middleware.RealIP
		f := mustIP(b)
		var key string
		hh := h(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { key, _ = f(r) }))
		b.ReportAllocs()
		for b.Loop() {
			rr := *r // RealIP rewrites RemoteAddr in place
			hh.ServeHTTP(nil, &rr)
		}
		sinkKey = key
	})
}

// BenchmarkCompose measures the composite keys a policy typically uses.
func BenchmarkCompose(b *testing.B) {
	ip := mustIP(b)
	r := newReq("192.0.2.1:1234")
	authed := r.WithContext(keyfunc.WithUser(context.Background(), "user-1234"))
	join := keyfunc.Must(keyfunc.Join(ip, keyfunc.User()))
	first := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), ip))
	ns := keyfunc.Must(keyfunc.Namespace("per-client", first))
	b.Run("Join(IP,User)", func(b *testing.B) { benchFunc(b, join, authed) })
	b.Run("FirstOf(User,IP)/user", func(b *testing.B) { benchFunc(b, first, authed) })
	b.Run("FirstOf(User,IP)/anonymous", func(b *testing.B) { benchFunc(b, first, r) })
	b.Run("Namespace(FirstOf(User,IP))", func(b *testing.B) { benchFunc(b, ns, authed) })
	b.Run("httprate.JoinKeys(KeyByIP,user)", func(b *testing.B) {
		//lint:ignore SA1019 the deprecated KeyByIP is the peer measured here.
		byIP := httprate.KeyByIP
		user := func(r *http.Request) (string, error) { id, _ := keyfunc.UserFrom(r.Context()); return id, nil }
		benchFunc(b, keyfunc.Func(httprate.JoinKeys(byIP, user)), authed)
	})
	b.Run("Header(credential)", func(b *testing.B) {
		// X-Api-Key marks a credential: Header keys it by its digest.
		f := keyfunc.Must(keyfunc.Header("X-Api-Key"))
		benchFunc(b, f, newReq("192.0.2.1:1", "X-Api-Key", "sk_live_0123456789abcdef0123456789abcdef"))
	})
	b.Run("Route/chi", func(b *testing.B) { benchFunc(b, keyfunc.Route(), routed(b)) })
}

// routed returns a request as chi hands it to a handler of /users/{id}.
func routed(b *testing.B) *http.Request {
	var got *http.Request
	k := &keyRecorder{f: func(r *http.Request) (string, error) { got = r; return "x", nil }}
	h := chiRouterWith(k.mw)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/users/1", nil))
	if got == nil {
		b.Fatal("route not reached")
	}
	return got
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}
