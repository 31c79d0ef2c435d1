package keyfunc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// Attacks on keyfunc that found no defect, kept so that they stay that
// way. Each test names the attack and what the attacker wanted.

// TestIP_NotationsOfOneClientGiveOneKeyOrNone: an attacker rewrites its
// own address in every notation an address parser might accept (port,
// case, zero padding, brackets, zone, mapped form, white space) to get a
// fresh bucket per request. Wherever the address comes from, each
// notation gives the client's one key, or no key at all (ErrNoClientIP);
// never a second key. (From a trusted header only the proxy's entry
// counts, so this is about a proxy that writes the address in another
// form, and about RemoteAddr rewritten by a middleware further out.)
func TestIP_NotationsOfOneClientGiveOneKeyOrNone(t *testing.T) {
	v4 := []string{
		"192.0.2.1", "192.0.2.1:1", "192.0.2.1:65535", "192.0.2.1:00080", " 192.0.2.1\t",
		"::ffff:192.0.2.1", "::FFFF:C000:0201", "[::ffff:192.0.2.1]:443", "0:0:0:0:0:ffff:c000:201",
		"[0000:0000:0000:0000:0000:ffff:192.0.2.1]",
	}
	v6 := []string{
		"2001:db8:1:2::5", "2001:DB8:1:2:0:0:0:5", "2001:0db8:0001:0002:0000:0000:0000:0005",
		"[2001:db8:1:2::5]", "[2001:db8:1:2::5]:443", "2001:db8:1:2::5%eth0", "[2001:db8:1:2::5%25x]:1",
		"2001:db8:1:2:0::5", "2001:db8:1:2::0.0.0.5",
	}
	// Not one of these may become a key: each is another notation that a
	// lenient parser (inet_aton, a URL parser) reads as 192.0.2.1 or
	// 2001:db8:1:2::5, or garbage around one.
	refused := []string{
		"192.000.002.001", "0300.0000.0002.0001", "0xc0.0.2.1", "0xc0000201", "3221225985", "192.0.2",
		"192.0.2.1.", "192.0.2.01", "+192.0.2.1", "192.0.2.1/32", "192.0.2.1:0x50", "192.0.2.1:-1",
		"192.0.2.1:65536", "[192.0.2.1]", "2001:db8:1:2::5/64", "[2001:db8:1:2::5", "2001:db8:1:2::5]",
		"[[2001:db8:1:2::5]]", "192.0.2.1\v", "%c0.0.2.1", "١٩٢.0.2.1", "2001:db8:1:2::5%",
	}
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	type source struct {
		f   keyfunc.Func
		req func(entry string) *http.Request
	}
	sources := map[string]source{
		"RemoteAddr":      {mustIP(t), func(e string) *http.Request { return newReq(e) }},
		"X-Forwarded-For": {mustIP(t, trusted), func(e string) *http.Request { return newReq("10.0.0.1:1", xff, e) }},
		"X-Real-IP":       {mustIP(t, trusted, keyfunc.FromHeader("X-Real-IP")), func(e string) *http.Request { return newReq("10.0.0.1:1", "X-Real-IP", e) }},
		"Forwarded":       {mustIP(t, trusted, keyfunc.FromForwarded()), func(e string) *http.Request { return newReq("10.0.0.1:1", "Forwarded", `for="`+e+`"`) }},
	}
	for name, s := range sources {
		t.Run(name, func(t *testing.T) {
			check := func(entries []string, want string) {
				t.Helper()
				keys := 0
				for _, e := range entries {
					got, err := s.f(s.req(e))
					switch {
					case err == nil && got == want:
						keys++
					case err == nil:
						t.Errorf("%q: key %q; want %q or ErrNoClientIP", e, got, want)
					case !errors.Is(err, keyfunc.ErrNoClientIP):
						t.Errorf("%q: error %v; want ErrNoClientIP", e, err)
					}
				}
				if keys == 0 {
					t.Errorf("no notation of %s gave its key", want)
				}
			}
			check(v4, "192.0.2.1")
			check(v6, "2001:db8:1:2::/64")
			for _, e := range refused {
				if got, err := s.f(s.req(e)); err == nil {
					t.Errorf("%q: key %q; want ErrNoClientIP", e, got)
				}
			}
		})
	}
	// Grouped by /128, the notations of 2001:db8:1:2::5 are still one key.
	f := mustIP(t, trusted, keyfunc.IPv6Prefix(128))
	for _, e := range v6 {
		wantKey(t, f, newReq("10.0.0.1:1", xff, e), "2001:db8:1:2::5", nil)
	}
}

// TestIP_FoldedAndRespelledHeaderLinesOffTheWire: the client's own
// X-Forwarded-For or Forwarded lines reach us through the proxy (here the
// test's raw connection, from loopback, trusted), folded (obs-fold),
// respelled (lower case, underscores, a space before the colon) or with
// an open quote, and the proxy adds its own line naming the client. What
// net/http makes of each is walked from the right: the key is the
// proxy's entry, 203.0.113.9, never 6.6.6.6; or the request is refused
// (400 from net/http, or no key), never keyed by the client's choice.
func TestIP_FoldedAndRespelledHeaderLinesOffTheWire(t *testing.T) {
	loopback := keyfunc.TrustedProxies(prefixes("127.0.0.0/8", "::1/128")...)
	funcs := map[string]keyfunc.Func{
		"xff":       mustIP(t, loopback),
		"forwarded": mustIP(t, loopback, keyfunc.FromForwarded()),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := funcs[r.URL.Query().Get("f")](r)
		if err != nil {
			fmt.Fprint(w, "error: ", err)
			return
		}
		fmt.Fprint(w, "key: ", key)
	}))
	defer srv.Close()
	tests := []struct {
		name, f, headers string
	}{
		{"folded XFF line", "xff", "X-Forwarded-For: 6.6.6.6,\r\n 6.6.6.7\r\nX-Forwarded-For: 203.0.113.9\r\n"},
		{"fold into the proxy's line", "xff", "X-Forwarded-For: 6.6.6.6\r\n\t, 203.0.113.9\r\n"},
		{"lower-case line first", "xff", "x-forwarded-for: 6.6.6.6\r\nX-Forwarded-For: 203.0.113.9\r\n"},
		{"underscore spelling after", "xff", "X-Forwarded-For: 203.0.113.9\r\nX_Forwarded_For: 6.6.6.6\r\n"},
		{"space before the colon", "xff", "X-Forwarded-For : 6.6.6.6\r\nX-Forwarded-For: 203.0.113.9\r\n"},
		{"blank line after", "xff", "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-For:\r\n"},
		{"folded Forwarded with an open quote", "forwarded", "Forwarded: for=\"6.6.6.6,\r\n for=6.6.6.7\r\nForwarded: for=203.0.113.9\r\n"},
		{"open quote on the proxy's line", "forwarded", "Forwarded: for=\"6.6.6.6, for=203.0.113.9\r\n"},
		{"quoted comma and semicolon", "forwarded", "Forwarded: for=\"6.6.6.6;x=\\\",\", for=203.0.113.9;proto=https\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawRequest(t, srv.Listener.Addr().String(),
				"GET /?f="+tt.f+" HTTP/1.1\r\nHost: x\r\n"+tt.headers+"Connection: close\r\n\r\n")
			if status == http.StatusBadRequest {
				return // net/http refused the request itself
			}
			if strings.Contains(body, "6.6.6.") || !(body == "key: 203.0.113.9" || strings.HasPrefix(body, "error: keyfunc: no client IP")) {
				t.Fatalf("status %d, body %q; want key 203.0.113.9 or no client IP", status, body)
			}
			if tt.name != "blank line after" && body != "key: 203.0.113.9" {
				t.Fatalf("status %d, body %q; want key 203.0.113.9", status, body)
			}
		})
	}
}

// rawRequest writes req on a new connection to addr and returns the
// response's status and body.
func rawRequest(t *testing.T, addr, req string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestIP_ForwardedClientTextInsideProxyElements: behind two trusted proxies
// that append to one Forwarded line (TrustedHops(2): a CDN, then a load
// balancer), the client controls the text left of them, and, through a
// parameter a proxy copies from the request (host= from the Host header),
// a quoted value inside a proxy's own element. It tries commas, semicolons,
// a second for= and escaped quotes to be keyed as 6.6.6.6. The key is the
// CDN's for=, or, where an escape makes the element unreadable, no key:
// never 6.6.6.6.
func TestIP_ForwardedClientTextInsideProxyElements(t *testing.T) {
	hops := mustIP(t, keyfunc.TrustedHops(2), keyfunc.FromForwarded())
	proxies := mustIP(t, keyfunc.TrustedProxies(prefixes("198.51.100.0/24", "10.0.0.0/8")...), keyfunc.FromForwarded())
	lb := "for=198.51.100.7;proto=https" // the CDN's address, written by the load balancer
	tests := []struct {
		name, line string
		ok         bool
	}{
		{"client's open quote", `for="6.6.6.6, for=203.0.113.9;host=a.example, ` + lb, true},
		{"client's escaped quote", `for="6.6.6.6\", for=203.0.113.9;host=a.example, ` + lb, true},
		{"client's trailing comma run", `for=6.6.6.6,,,,, for=203.0.113.9, ` + lb, true},
		{"quoted comma in host", `for=203.0.113.9;host="a, for=6.6.6.6", ` + lb, true},
		{"quoted semicolon in host", `for=203.0.113.9;host="a;for=6.6.6.6", ` + lb, true},
		{"quote pairs in host", `for=203.0.113.9;host="a"";for=6.6.6.6;""", ` + lb, false},
		{"escaped quote in host", `for=203.0.113.9;host="a\";for=6.6.6.6;x=\"", ` + lb, false},
		{"escaped quote and comma in host", `for=203.0.113.9;host="a\", for=6.6.6.6, x=\"", ` + lb, false},
	}
	for _, tt := range tests {
		for name, f := range map[string]keyfunc.Func{"TrustedHops": hops, "TrustedProxies": proxies} {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				got, err := f(newReq("10.0.0.1:1", "Forwarded", tt.line))
				switch {
				case tt.ok && (err != nil || got != "203.0.113.9"):
					t.Fatalf("key %q, %v; want 203.0.113.9", got, err)
				case !tt.ok && !errors.Is(err, keyfunc.ErrNoClientIP):
					t.Fatalf("key %q, %v; want ErrNoClientIP (the element cannot be read)", got, err)
				}
			})
		}
	}
}

// TestRoute_UnderJoinAndNamespaceIsOneDigestPerRoute checks Route's doc: a
// ServeMux pattern holds a space, so Join and Namespace write a digest of
// it, still one key per route (two paths of a route share it, another
// route has another), a client inventing paths cannot multiply keys.
func TestRoute_UnderJoinAndNamespaceIsOneDigestPerRoute(t *testing.T) {
	ns := keyfunc.Must(keyfunc.Namespace("per-route", keyfunc.Route()))
	join := keyfunc.Must(keyfunc.Join(keyfunc.Route()))
	keys := map[string][2]string{}
	mux := http.NewServeMux()
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, errA := ns(r)
		b, errB := join(r)
		if errA != nil || errB != nil {
			t.Errorf("%.40s: keys %q, %v; %q, %v", r.RequestURI, a, errA, b, errB)
		}
		keys[r.RequestURI] = [2]string{a, b}
	})
	mux.Handle("GET /users/{id}", record)
	mux.Handle("GET /orders/{id}", record)
	for _, p := range []string{"/users/1", "/users/2", "/users/x%2Fy%2F..%2F" + strings.Repeat("z", 4096), "/orders/1"} {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	digest := func(s string) string { // Secret's digest, as Join's and Namespace's docs say
		d, err := keyfunc.Secret(keyfunc.Must(keyfunc.Const(s)))(httptest.NewRequest("GET", "/", nil))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := [2]string{"per-route#" + digest("GET /users/{id}"), "#" + digest("GET /users/{id}")}
	for _, p := range []string{"/users/1", "/users/2", "/users/x%2Fy%2F..%2F" + strings.Repeat("z", 4096)} {
		if keys[p] != want {
			t.Errorf("%.40s: keys %q; want %q", p, keys[p], want)
		}
	}
	if len(want[1]) != 1+keyfunc.HashLen {
		t.Errorf("Join's digest %q is %d bytes; want %d", want[1], len(want[1]), 1+keyfunc.HashLen)
	}
	if o := keys["/orders/1"]; o[0] == want[0] || o[1] == want[1] || o[0] == "" {
		t.Errorf("/orders/1: keys %q; want keys of their own", o)
	}
}

// TestIP_FromContextNormalForm checks FromContext's doc: the middleware's
// address is unmapped, stripped of its zone and grouped like any other,
// the key RemoteAddr would give for the same client; RemoteAddr itself is
// never read.
func TestIP_FromContextNormalForm(t *testing.T) {
	type ctxKey struct{}
	get := func(ctx context.Context) netip.Addr { a, _ := ctx.Value(ctxKey{}).(netip.Addr); return a }
	fromCtx := mustIP(t, keyfunc.FromContext(get))
	direct := mustIP(t)
	for _, s := range []string{"192.0.2.1", "::ffff:192.0.2.1", "2001:db8:1:2::5", "2001:db8:1:2:ffff::9", "fe80::1%eth0", "64:ff9b::808:808", "64:ff9b::a00:1"} {
		a := netip.MustParseAddr(s)
		r := newReq("@")
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, a))
		want, err := direct(newReq(netip.AddrPortFrom(a, 1).String()))
		if err != nil {
			t.Fatalf("direct %s: %v", s, err)
		}
		wantKey(t, fromCtx, r, want, nil)
	}
}

// TestIP_TranslatedPeerIsComparedAsItCame checks IP's doc: a peer of the
// well-known NAT64 prefix is keyed as the IPv4 address it carries, but a
// trusted proxy's prefix is compared with the address as it came. An IPv4
// proxy prefix does not make a translated peer of that address a proxy
// (its X-Forwarded-For is the client's, ignored), and the translated
// address listed itself does.
func TestIP_TranslatedPeerIsComparedAsItCame(t *testing.T) {
	const peer = "[64:ff9b::808:808]:1"
	v4 := mustIP(t, keyfunc.TrustedProxies(prefixes("8.8.8.0/24")...))
	wantKey(t, v4, newReq(peer, xff, "203.0.113.9"), "8.8.8.8", nil)
	wantKey(t, v4, newReq("8.8.8.8:1", xff, "203.0.113.9"), "203.0.113.9", nil)
	v6 := mustIP(t, keyfunc.TrustedProxies(prefixes("64:ff9b::808:808/128")...))
	wantKey(t, v6, newReq(peer, xff, "203.0.113.9"), "203.0.113.9", nil)
	wantKey(t, v6, newReq("8.8.8.8:1", xff, "203.0.113.9"), "8.8.8.8", nil)
}

// TestHeaderAndCookieKeyTheValueAnAuthCheckReads: a client sends the
// credential twice, a valid one where an authentication middleware looks
// (r.Header.Get, r.Cookie: the first) and a fresh one after it, hoping the
// limiter keys by the other and gives it a bucket per request. Header and
// Cookie key by the very value those accessors return (its digest, since
// both names mark a credential), across header lines, with an empty or
// unparseable first value too.
func TestHeaderAndCookieKeyTheValueAnAuthCheckReads(t *testing.T) {
	h := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	c := keyfunc.Must(keyfunc.Cookie("session"))
	for _, lines := range [][]string{
		{"X-Api-Key", "valid", "X-Api-Key", "fresh-1"},
		{"x-api-key", "valid", "X-API-KEY", "fresh-2"},
		{"X-Api-Key", "", "X-Api-Key", "fresh-3"},
		{"Cookie", "session=valid", "Cookie", "session=fresh-4"},
		{"Cookie", "a=1; session=valid; session=fresh-5"},
		{"Cookie", `session="bad\value"; session=valid`, "Cookie", "session=fresh-6"},
		{"Cookie", "session=; session=fresh-7"},
	} {
		r := newReq("192.0.2.1:1", lines...)
		wantH := r.Header.Get("X-Api-Key")
		var wantC string
		if ck, err := r.Cookie("session"); err == nil {
			wantC = ck.Value
		}
		for name, tc := range map[string]struct {
			f    keyfunc.Func
			want string
		}{"Header": {h, wantH}, "Cookie": {c, wantC}} {
			got, err := tc.f(r)
			if tc.want == "" {
				if err == nil {
					t.Errorf("%s over %q: key %q; want no key (the accessor reads %q)", name, lines, got, tc.want)
				}
				continue
			}
			if err != nil || got != secretOf(t, tc.want) {
				t.Errorf("%s over %q: key %q, %v; want %q, the digest of %q, the value the accessor reads", name, lines, got, err, secretOf(t, tc.want), tc.want)
			}
		}
	}
}
