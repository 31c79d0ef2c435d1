package keyfunc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// A key for a policy that limits signed-in users by ID and everyone else by
// client IP, behind a proxy at 10.0.0.0/8. Forged X-Forwarded-For entries
// change nothing.
func Example() {
	ip, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		panic(err)
	}
	who := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), ip))
	key := keyfunc.Must(keyfunc.Namespace("per-client", who))

	show := func(what string, r *http.Request) {
		k, err := key(r)
		fmt.Printf("%-40s %s %v\n", what, k, err)
	}

	// A client reaching the server directly claims to be 1.2.3.4.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "198.51.100.7:4711"
	r.Header.Set("X-Forwarded-For", "1.2.3.4")
	show("direct, forged header:", r)

	// The same claim through our proxy, which appended the real address.
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.1:80"
	r.Header.Set("X-Forwarded-For", "1.2.3.4, 203.0.113.5")
	show("via proxy, forged leftmost entry:", r)

	// Signed in: the user ID wins over the address.
	r = r.WithContext(keyfunc.WithUser(r.Context(), "alice"))
	show("via proxy, signed in:", r)

	// Output:
	// direct, forged header:                   per-client:1:198.51.100.7 <nil>
	// via proxy, forged leftmost entry:        per-client:1:203.0.113.5 <nil>
	// via proxy, signed in:                    per-client:0:alice <nil>
}

// IPv6 clients are grouped by /64 and IPv4-mapped addresses are unmapped
// first, so they do not all land in one IPv6 bucket.
func ExampleIP() {
	ip := keyfunc.Must(keyfunc.IP())
	for _, addr := range []string{
		"[2001:db8:1:2::1]:443",
		"[2001:db8:1:2:ffff::9]:443",
		"[::ffff:192.0.2.1]:443",
		"[::ffff:192.0.2.2]:443",
		"not-an-address",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		k, err := ip(r)
		fmt.Printf("%-28s %q %v\n", addr, k, errors.Is(err, keyfunc.ErrNoKey))
	}
	// Output:
	// [2001:db8:1:2::1]:443        "2001:db8:1:2::/64" false
	// [2001:db8:1:2:ffff::9]:443   "2001:db8:1:2::/64" false
	// [::ffff:192.0.2.1]:443       "192.0.2.1" false
	// [::ffff:192.0.2.2]:443       "192.0.2.2" false
	// not-an-address               "" true
}

// Behind a SIIT-DC translator whose prefix is 2001:db8:64::/96, every IPv4
// client arrives as an address of one /64: declared, each is keyed as the
// IPv4 address it carries. 6to4 and well-known-prefix addresses need no
// option.
func ExampleNAT64Prefixes() {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.NAT64Prefixes(netip.MustParsePrefix("2001:db8:64::/96"))))
	for _, addr := range []string{
		"[2001:db8:64::5db8:d822]:443", // 93.184.216.34, translated
		"[2001:db8:64::808:808]:443",   // 8.8.8.8, translated
		"[2002:5db8:d822:7::1]:443",    // 6to4 site of 93.184.216.34
		"[64:ff9b::808:808]:443",       // the well-known prefix
		"[2001:db8:65::808:808]:443",   // no translator: an IPv6 client
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		k, _ := ip(r)
		fmt.Printf("%-30s %s\n", addr, k)
	}
	// Output:
	// [2001:db8:64::5db8:d822]:443   93.184.216.34
	// [2001:db8:64::808:808]:443     8.8.8.8
	// [2002:5db8:d822:7::1]:443      93.184.216.34
	// [64:ff9b::808:808]:443         8.8.8.8
	// [2001:db8:65::808:808]:443     2001:db8:65::/64
}

// IP can take the address that chi's client-IP middleware has already
// decided, and group it like any other.
func ExampleFromContext() {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.FromContext(middleware.GetClientIPAddr)))

	r := chi.NewRouter()
	r.Use(middleware.ClientIPFromXFF("10.0.0.0/8"))
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		k, err := ip(r)
		fmt.Println(k, err)
	})

	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "10.0.0.1:80"
	req.Header.Set("X-Forwarded-For", "6.6.6.6, 2001:db8:7:8::1")
	r.ServeHTTP(httptest.NewRecorder(), req)
	// Output:
	// 2001:db8:7:8::/64 <nil>
}

// Join keeps parts apart whatever they contain.
func ExampleJoin() {
	part := func(v string) keyfunc.Func {
		return func(*http.Request) (string, error) { return v, nil }
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	a, _ := keyfunc.Must(keyfunc.Join(part("a:b"), part("c")))(r)
	b, _ := keyfunc.Must(keyfunc.Join(part("a"), part("b:c")))(r)
	fmt.Println(a)
	fmt.Println(b)
	// Output:
	// 3:a:b1:c
	// 1:a3:b:c
}

// An IP-plus-user composite: each signed-in user gets a bucket per client
// address, and a forged X-Forwarded-For from a direct client is ignored.
func ExampleJoin_ipAndUser() {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))))
	key := keyfunc.Must(keyfunc.Namespace("login", keyfunc.Must(keyfunc.Join(ip, keyfunc.User()))))

	for _, forged := range []string{"1.1.1.1", "2.2.2.2"} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = "198.51.100.7:4711" // not a trusted proxy
		r.Header.Set("X-Forwarded-For", forged)
		r = r.WithContext(keyfunc.WithUser(r.Context(), "alice"))
		fmt.Println(key(r))
	}

	// Without a user the composite has no key: an error, not a shared bucket.
	r := httptest.NewRequest(http.MethodPost, "/login", nil)
	_, err := key(r)
	fmt.Println(errors.Is(err, keyfunc.ErrNoKey), err)
	// Output:
	// login:12:198.51.100.75:alice <nil>
	// login:12:198.51.100.75:alice <nil>
	// true keyfunc: no user ID in the request context (anonymous, or is the limiter mounted before the authentication middleware that calls keyfunc.WithUser?)
}

// With chi, Route must run after routing: inline with r.With.
func ExampleRoute() {
	route := keyfunc.Route()
	limiter := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k, err := route(r)
			fmt.Println(r.URL.Path, "->", k, err)
			next.ServeHTTP(w, r)
		})
	}
	r := chi.NewRouter()
	r.With(limiter).Get("/users/{id}", func(http.ResponseWriter, *http.Request) {})
	for _, p := range []string{"/users/1", "/users/2"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	// Output:
	// /users/1 -> /users/{id} <nil>
	// /users/2 -> /users/{id} <nil>
}

// A header that carries a credential by its name (Authorization,
// X-Api-Key, a session cookie) is keyed by its digest with no wrapper;
// others, such as X-Tenant, are keyed as sent.
func ExampleHeader() {
	apiKey := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	tenant := keyfunc.Must(keyfunc.Header("X-Tenant"))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Api-Key", "sk_live_do_not_log_me")
	r.Header.Set("X-Tenant", "acme")
	k, _ := apiKey(r)
	t, _ := tenant(r)
	fmt.Println(len(k), strings.Contains(k, "sk_live"), t)
	// Output:
	// 22 false acme
}

// Values whose part does not hash them (an account number in a header not
// named after a credential) are hashed before they reach the store.
func ExampleSecret() {
	key := keyfunc.Must(keyfunc.Namespace("per-account", keyfunc.Secret(keyfunc.Must(keyfunc.Header("X-Account-Number")))))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Account-Number", "DE89370400440532013000")
	k, _ := key(r)
	fmt.Println(len(k), k[:len("per-account:")], strings.Contains(k, "DE89"))
	// Output:
	// 34 per-account: false
}

// sessionKey is the context key an authentication middleware of another
// library stores its user ID under.
type sessionKey struct{}

// ContextValue keys a request by the user an authentication middleware of
// another library stored in the context, falling back to the client IP for
// anonymous requests.
func ExampleContextValue() {
	user, _ := keyfunc.ContextValue(sessionKey{})
	key, _ := keyfunc.FirstOf(user, keyfunc.Must(keyfunc.IP()))

	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "198.51.100.7:50000"
	anon, _ := key(r)

	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, int64(1042)))
	signedIn, _ := key(r)

	fmt.Println(anon)     // FirstOf prefixes the part's index:
	fmt.Println(signedIn) // user "198.51.100.7" is not that client
	// Output:
	// 1:198.51.100.7
	// 0:1042
}

// Code that must agree with an ip key on which peers are proxies compares
// the peer, unmapped, with the prefixes NormalizePrefix returns: the
// IPv4-mapped notation of a proxy's prefix holds the IPv4 peers it names.
// Prefixes that trust every peer of a family are refused with a
// *TrustAllError.
func ExampleNormalizePrefix() {
	proxy := keyfunc.NormalizePrefix(netip.MustParsePrefix("::ffff:10.1.2.3/104"))
	peer := netip.MustParseAddr("::ffff:10.9.9.9").Unmap()
	fmt.Println(proxy, proxy.Contains(peer))

	_, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("0.0.0.0/1"), netip.MustParsePrefix("128.0.0.0/1")))
	var te *keyfunc.TrustAllError
	if errors.As(err, &te) {
		fmt.Println("refused: trusts every", te.Families[0], "peer")
	}
	// Output:
	// 10.0.0.0/8 true
	// refused: trusts every IPv4 peer
}
