package keyfunc_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

type invKey struct{}

type invStringer struct{ id string }

func (s *invStringer) String() string { return s.id }

// TestEveryFuncKeyOrErrorOnHostileRequests checks the package's promises
// over every Func it builds and a set of hostile requests (empty, huge,
// non-UTF-8 and control-byte values; thousands of header lines; a nil
// header map; odd context values; chi before routing): no Func panics;
// each returns a non-empty key and a nil error or "" and an error of the
// ErrNoKey family; and the bounded Funcs stay within their bounds (IP's
// text, Join's 3+MaxPartLen per part, Namespace's ns+1+MaxKeyLen, Secret's
// HashLen), printable where the docs say so.
func TestEveryFuncKeyOrErrorOnHostileRequests(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8", "2001:db8:ffff::/48")...)
	get := func(ctx context.Context) netip.Addr { a, _ := ctx.Value(invKey{}).(netip.Addr); return a }
	ip := mustIP(t, trusted)
	header := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	cookie := keyfunc.Must(keyfunc.Cookie("s"))
	ctxValue := keyfunc.Must(keyfunc.ContextValue(invKey{}))
	hmacd := keyfunc.Must(keyfunc.SecretHMAC([]byte("0123456789abcdef"), cookie))
	first := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), ctxValue, header, ip))
	const maxIPKey = len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")
	type bound struct {
		max       int
		printable bool
	}
	funcs := map[string]struct {
		f keyfunc.Func
		b bound
	}{
		"IP":                  {mustIP(t), bound{maxIPKey, true}},
		"IP XFF":              {ip, bound{maxIPKey, true}},
		"IP Forwarded":        {mustIP(t, trusted, keyfunc.FromForwarded()), bound{maxIPKey, true}},
		"IP X-Real-IP":        {mustIP(t, trusted, keyfunc.FromHeader("X-Real-IP")), bound{maxIPKey, true}},
		"IP TrustedHops":      {mustIP(t, keyfunc.TrustedHops(2), keyfunc.FromForwarded()), bound{maxIPKey, true}},
		"IP FromContext":      {mustIP(t, keyfunc.FromContext(get)), bound{maxIPKey, true}},
		"IP /128 /8":          {mustIP(t, trusted, keyfunc.IPv6Prefix(128), keyfunc.IPv4Prefix(8)), bound{maxIPKey, true}},
		"User":                {keyfunc.User(), bound{}},
		"ContextValue":        {ctxValue, bound{}},
		"Header":              {header, bound{}},
		"Header Host":         {keyfunc.Must(keyfunc.Header("Host")), bound{}},
		"Cookie":              {cookie, bound{}},
		"Route":               {keyfunc.Route(), bound{}},
		"Method":              {keyfunc.Method(), bound{len("OPTIONS"), true}},
		"Global":              {keyfunc.Global(), bound{1, true}},
		"Const":               {keyfunc.Must(keyfunc.Const("c")), bound{1, true}},
		"Secret":              {keyfunc.Secret(header), bound{keyfunc.HashLen, true}},
		"SecretHMAC":          {hmacd, bound{keyfunc.HashLen, true}},
		"Join":                {keyfunc.Must(keyfunc.Join(ip, header, cookie, keyfunc.Method())), bound{4 * (3 + keyfunc.MaxPartLen), true}},
		"Join User Route":     {keyfunc.Must(keyfunc.Join(keyfunc.User(), keyfunc.Route())), bound{2 * (3 + keyfunc.MaxPartLen), true}},
		"FirstOf":             {first, bound{}},
		"Namespace Header":    {keyfunc.Must(keyfunc.Namespace("ns", header)), bound{len("ns:") + keyfunc.MaxKeyLen, true}},
		"Namespace FirstOf":   {keyfunc.Must(keyfunc.Namespace("n", first)), bound{len("n:") + keyfunc.MaxKeyLen, true}},
		"Namespace Join":      {keyfunc.Must(keyfunc.Namespace("n", keyfunc.Must(keyfunc.Join(cookie, ctxValue)))), bound{len("n:") + keyfunc.MaxKeyLen, true}},
		"Namespace of Secret": {keyfunc.Must(keyfunc.Namespace("n", keyfunc.Secret(ctxValue))), bound{len("n:") + keyfunc.HashLen, true}},
	}

	const mib = 1 << 18
	huge := strings.Repeat("a", mib)
	values := []string{
		"", " ", "\t", huge, strings.Repeat(",", mib), strings.Repeat(`"`, mib), strings.Repeat(`\`, mib),
		strings.Repeat(";", mib), strings.Repeat("10.0.0.9,", mib/9), "\xff\xfe", "a\x00b", "a\r\nb",
		"for=\"10.0.0.1\\\", for=", "unknown", "s=" + huge, "s=\"" + huge, "=;=;=", "192.0.2.1",
	}
	names := []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Api-Key", "Cookie"}
	var reqs []*http.Request
	for _, ra := range []string{"", "@", "[", "]:", ":", "1.2.3.4:99999", huge, "\x00", "192.0.2.1:" + strings.Repeat("0", mib) + "1"} {
		reqs = append(reqs, newReq(ra, "X-Forwarded-For", "203.0.113.9", "Forwarded", "for=203.0.113.9", "X-Real-IP", "203.0.113.9"))
	}
	// Trusted peers, one of each family (the second mapped), hand the
	// walk every hostile value.
	for _, ra := range []string{"10.0.0.1:1", "[::ffff:10.0.0.1]:1", "[2001:db8:ffff::1]:1"} {
		for _, n := range names {
			for _, v := range values {
				reqs = append(reqs, newReq(ra, n, v))
			}
		}
	}
	lines := newReq("10.0.0.1:1")
	for i := 0; i < 10000; i++ {
		for _, n := range names {
			lines.Header.Add(n, "10.0.0.9")
		}
	}
	reqs = append(reqs, lines)
	noHeader := newReq("10.0.0.1:1")
	noHeader.Header = nil
	reqs = append(reqs, noHeader)
	for _, host := range []string{"", huge, "\xff"} {
		r := newReq("10.0.0.1:1")
		r.Host = host
		reqs = append(reqs, r)
	}
	for _, m := range []string{"", "get", huge, "GET\x00"} {
		r := newReq("10.0.0.1:1")
		r.Method = m
		reqs = append(reqs, r)
	}
	for _, v := range []any{
		nil, (*invStringer)(nil), &invStringer{}, &invStringer{id: huge}, func() {}, make(chan int), map[string]int{"a": 1},
		[]int{1}, struct{}{}, 0, int8(-1), "", huge, "\xff", []byte{}, []byte(huge), netip.Addr{},
		netip.MustParseAddr("::ffff:10.0.0.1"), netip.MustParseAddr("fe80::1%" + strings.Repeat("z", 200)),
	} {
		r := newReq("10.0.0.1:1", "X-Forwarded-For", "203.0.113.9")
		r = r.WithContext(context.WithValue(r.Context(), invKey{}, v))
		reqs = append(reqs, r)
	}
	for _, id := range []string{"", huge, "\x00", "192.0.2.1"} {
		r := newReq("10.0.0.1:1")
		reqs = append(reqs, r.WithContext(keyfunc.WithUser(r.Context(), id)))
	}
	{
		r := newReq("10.0.0.1:1")
		reqs = append(reqs, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, chi.NewRouteContext())))
		r = newReq("10.0.0.1:1")
		r.Pattern = huge
		reqs = append(reqs, r.WithContext(keyfunc.WithRoute(r.Context(), "")))
	}

	for name, tc := range funcs {
		t.Run(name, func(t *testing.T) {
			for i, r := range reqs {
				key, err := func() (key string, err error) {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("request %d: panic: %v", i, p)
						}
					}()
					return tc.f(r)
				}()
				switch {
				case err != nil && key != "":
					t.Fatalf("request %d: key %.40q with error %v", i, key, err)
				case err == nil && key == "":
					t.Fatalf("request %d: empty key, nil error", i)
				case err != nil && !errors.Is(err, keyfunc.ErrNoKey):
					t.Fatalf("request %d: error %v outside the ErrNoKey family", i, err)
				}
				if tc.b.max > 0 && len(key) > tc.b.max {
					t.Fatalf("request %d: key of %d bytes %.60q; bound %d", i, len(key), key, tc.b.max)
				}
				if tc.b.printable {
					for j := 0; j < len(key); j++ {
						if key[j] < 0x21 || key[j] > 0x7e {
							t.Fatalf("request %d: key %.60q has byte %#x", i, key, key[j])
						}
					}
				}
			}
		})
	}
}
