package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/client"
	"golang.org/x/net/idna"
)

// An internationalised host name has a Unicode and an ASCII (punycode)
// spelling; net/http sends the ASCII one, mapped by the IDNA lookup rules
// (case folded, full-width letters to their ASCII forms), whichever the
// program wrote. Every spelling of one host must share one key, else the
// host is paced as two and gets twice the rate.
func TestHostKeyIDNA(t *testing.T) {
	for _, group := range []struct {
		name string
		want string
		urls []string
	}{
		{"unicode and punycode", "xn--bcher-kva.example", []string{
			"https://bücher.example/",
			"https://BÜCHER.example/",
			"https://Bücher.EXAMPLE/",
			"https://xn--bcher-kva.example/",
			"https://XN--BCHER-KVA.example/",
			"https://Xn--Bcher-Kva.Example/",
			"https://bücher.example:443/",
			"https://bücher.example./",
			"https://BÜCHER.example.:443/",
			"https://xn--bcher-kva.example.:443/",
		}},
		{"with a port", "xn--bcher-kva.example:8443", []string{
			"https://bücher.example:8443/",
			"https://BÜCHER.example.:8443/",
			"https://XN--BCHER-KVA.example:8443/",
		}},
		{"full-width", "example.com", []string{
			"https://example.com/",
			"https://EXAMPLE.com/",
			"https://ｅｘａｍｐｌｅ.com/",
			"https://ＥＸＡＭＰＬＥ.com/",
			"https://ｅｘａｍｐｌｅ．ｃｏｍ/",
			"https://ｅｘａｍｐｌｅ。com/",
			"https://ｅｘａｍｐｌｅ.com．/",
			"http://ｅｘａｍｐｌｅ.com:80/",
		}},
		{"ASCII labels beside a Unicode one", "api.xn--bcher-kva.example", []string{
			"https://API.bücher.example/",
			"https://api.xn--bcher-kva.example/",
		}},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, raw := range group.urls {
				u, err := url.Parse(raw)
				if err != nil {
					t.Fatalf("url.Parse(%q): %v", raw, err)
				}
				if got := client.HostKey(&http.Request{URL: u}); got != group.want {
					t.Errorf("HostKey(%s) = %q, want %q", raw, got, group.want)
				}
			}
		})
	}

	// The Host field, for a request with no host in its URL, is keyed alike.
	r := &http.Request{URL: &url.URL{Path: "/"}, Host: "BÜCHER.example:8443"}
	if got, want := client.HostKey(r), "xn--bcher-kva.example:8443"; got != want {
		t.Errorf("HostKey(Host %q) = %q, want %q", r.Host, got, want)
	}
}

// A host that IDNA refuses is keyed by its lower-cased form, the same each
// time, and does not panic.
func TestHostKeyInvalidIDNA(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"Bü_cher.example", "bü_cher.example"},               // '_' is not allowed (STD3 rules)
		{"BÜ_CHER.example.", "bü_cher.example"},              // trailing dot dropped as ever
		{"\u0301ABC.example:8443", "\u0301abc.example:8443"}, // a label may not start with a combining mark
		{"xn--bcher-kva.bü_cher", "xn--bcher-kva.bü_cher"},
	} {
		r := &http.Request{URL: &url.URL{Host: tc.host}}
		first := client.HostKey(r)
		if first != tc.want {
			t.Errorf("HostKey(%q) = %q, want %q", tc.host, first, tc.want)
		}
		if again := client.HostKey(r); again != first {
			t.Errorf("HostKey(%q) = %q, then %q", tc.host, first, again)
		}
	}
}

// HostKey is on every request's path: a host already in its key's form
// (lower-case ASCII) is keyed without allocating, with or without a port.
func TestHostKeyASCIIAllocs(t *testing.T) {
	for _, raw := range []string{
		"https://api.example.com/v1",
		"https://api.example.com:443/v1",
		"http://api.example.com:80/",
		"https://api.example.com:8443/v1",
		"https://api.example.com./v1",
		"https://xn--bcher-kva.example/",
		"http://192.0.2.1:8080/",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		r := &http.Request{URL: u}
		if n := testing.AllocsPerRun(100, func() { client.HostKey(r) }); n != 0 {
			t.Errorf("HostKey(%s) allocates %v times, want 0", raw, n)
		}
	}
}

// Through the Transport: a request to the Unicode spelling of a host and one
// to its punycode spelling take turns in one queue.
func TestIDNASpellingsShareOneQueue(t *testing.T) {
	clock := newAutoClock()
	var mu sync.Mutex
	var sent []time.Duration
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent = append(sent, clock.Now().Sub(t0))
		mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := client.New(next, client.WithClock(clock), client.WithRate(1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://bücher.example/", "https://XN--BCHER-KVA.example/", "https://ｂüｃｈｅｒ.example./"} {
		if err := roundTrip(t.Context(), tr, u, ""); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	mu.Lock()
	got := slices.Clone(sent)
	mu.Unlock()
	if want := []time.Duration{0, time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("sent at %v, want %v (one queue for every spelling)", got, want)
	}

	// With no wait allowed, the second spelling is refused outright: its
	// turn is taken, and the error names the punycode key.
	tr, err = client.New(next, client.WithClock(clock), client.WithRate(1, time.Second), client.WithMaxWait(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t.Context(), tr, "https://xn--bcher-kva.example/", ""); err != nil {
		t.Fatal(err)
	}
	err = roundTrip(t.Context(), tr, "https://BÜCHER.example/", "")
	var we *client.WaitError
	if !errors.As(err, &we) || we.Key != "xn--bcher-kva.example" {
		t.Errorf("second spelling: err %v, want a *WaitError for key xn--bcher-kva.example", err)
	}
}

// The key is where net/http sends the request: it dials the ASCII form of
// each spelling, which is that spelling's key once its default port is
// dropped. (The Host header it writes is punycode too, but without the
// lookup mapping: "BÜCHER.example" goes as "xn--BCHER-2pa.example", to the
// address of xn--bcher-kva.example.)
func TestHostKeyIsTheAddressDialled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var mu sync.Mutex
	var dialled []string
	hc := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}}
	defer hc.CloseIdleConnections()
	for _, raw := range []string{
		"http://bücher.example/",
		"http://BÜCHER.example/",
		"http://BÜCHER.example:8080/",
		"http://ｅｘａｍｐｌｅ.com/",
		"http://ＥＸＡＭＰＬＥ.com:8080/",
		"http://API.bücher.example/",
	} {
		resp, err := hc.Get(raw)
		if err != nil {
			t.Fatalf("GET %s: %v", raw, err)
		}
		resp.Body.Close()
		mu.Lock()
		addr := dialled[len(dialled)-1]
		mu.Unlock()
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(addr, ":80")
		if got := client.HostKey(&http.Request{URL: u}); got != want {
			t.Errorf("HostKey(%s) = %q, net/http dialled %q", raw, got, addr)
		}
	}
}

// HostKey never panics, gives one key each time, and keys a host name as
// it keys the name's ASCII form under the IDNA lookup rules (the form
// net/http dials) if it has non-ASCII characters.
func FuzzHostKey(f *testing.F) {
	for _, h := range []string{"bücher.example", "BÜCHER.example.", "ｅｘａｍｐｌｅ。com", "Bü_cher.example",
		"\u0301ABC.example", "[2001:DB8::1]:443", "api.example.com:8443", "。", "xn--bcher-kva.example", "İ.example"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, host string) {
		key := func(h string) string {
			return client.HostKey(&http.Request{URL: &url.URL{Scheme: "https", Host: h}})
		}
		k := key(host)
		if again := key(host); again != k {
			t.Fatalf("HostKey(%q) = %q, then %q", host, k, again)
		}
		// net/http maps only a name with non-ASCII characters.
		if strings.ContainsAny(host, ":[]") || !slices.ContainsFunc([]byte(host), func(b byte) bool { return b >= utf8.RuneSelf }) {
			return
		}
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			if ka := key(a); ka != k {
				t.Errorf("HostKey(%q) = %q, but HostKey(%q) = %q", host, k, a, ka)
			}
		}
	})
}

// A port written with leading zeros is the same port: net/http reaches the
// same server through "host:08080" as through "host:8080" (the dialer reads
// the port as a number), so both spellings share one key, and a default
// port so written ("https://host:0443") is no port at all.
func TestHostKeyPortLeadingZeros(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	padded := "http://" + u.Hostname() + ":00" + u.Port() + "/"
	resp, err := srv.Client().Get(padded)
	if err != nil {
		t.Fatalf("GET %s: %v (net/http should reach the server on the padded port)", padded, err)
	}
	resp.Body.Close()

	for _, tc := range []struct{ url, want string }{
		{padded, u.Host},
		{srv.URL + "/", u.Host},
		{"https://api.example.com:0443/", "api.example.com"},
		{"http://api.example.com:0080/", "api.example.com"},
		{"https://api.example.com:08443/", "api.example.com:8443"},
		{"https://[2001:db8::1]:00443/", "[2001:db8::1]"},
		{"http://api.example.com:00/", "api.example.com:0"},
		{"http://api.example.com:0/", "api.example.com:0"},
	} {
		pu, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := client.HostKey(&http.Request{URL: pu}); got != tc.want {
			t.Errorf("HostKey(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// An IPv4-mapped IPv6 literal is a spelling of the IPv4 address: net/http
// dials "[::ffff:127.0.0.1]" over IPv4, to the very server that
// "127.0.0.1" reaches, so both share one key (the IPv4 one), else that
// server is paced as two and gets twice the rate.
func TestHostKeyIPv4Mapped(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no IPv4 loopback: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port
	mapped := "http://[::ffff:127.0.0.1]:" + strconv.Itoa(port) + "/"
	resp, err := srv.Client().Get(mapped)
	if err != nil {
		t.Fatalf("GET %s: %v (net/http should reach the IPv4 server)", mapped, err)
	}
	resp.Body.Close()

	for _, tc := range []struct{ url, want string }{
		{mapped, "127.0.0.1:" + strconv.Itoa(port)},
		{"http://[::FFFF:7f00:1]:" + strconv.Itoa(port) + "/", "127.0.0.1:" + strconv.Itoa(port)},
		{"https://[::ffff:192.0.2.1]/", "192.0.2.1"},
		{"https://[0:0:0:0:0:ffff:c000:201]:443/", "192.0.2.1"},
		{"https://[::ffff:192.0.2.1]:8443/", "192.0.2.1:8443"},
		{"https://[::192.0.2.1]/", "[::c000:201]"}, // IPv4-compatible: an IPv6 address
	} {
		pu, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := client.HostKey(&http.Request{URL: pu}); got != tc.want {
			t.Errorf("HostKey(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
