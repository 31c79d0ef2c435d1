package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// forwardingReports serves one request from remoteAddr carrying header
// with value through a chi router and a middleware whose ip key trusts
// no proxy, and returns the forwarding reports it made.
func forwardingReports(t *testing.T, remoteAddr, header, value string) []error {
	t.Helper()
	store, _ := newStore(t)
	var got reports
	m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), got.handler())
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = remoteAddr
	req.Header.Set(header, value)
	r.ServeHTTP(httptest.NewRecorder(), req)
	return got.forwarding()
}

// TestForwardingNamedClientForms: a peer whose address is the client that
// a forwarding header names (RemoteAddr rewritten further out, with a
// port) is not reported, however the header writes it: an X-Forwarded-For
// entry with blanks before its comma, a Forwarded for= that is not the
// element's first parameter, an address that ends the header's first 512
// bytes. One that names another client, or whose address begins within
// those bytes and ends past them, or an IPv4 address in brackets (no
// address), is reported.
func TestForwardingNamedClientForms(t *testing.T) {
	pad := func(n int, addr string) string { return strings.Repeat(" ", n-len(addr)) + addr }
	for _, tc := range []struct {
		name, remote, header, value string
		reported                    bool
	}{
		{"blanks before the comma", "198.51.100.7:4711", "X-Forwarded-For", "198.51.100.7 \t, 10.0.0.1", false},
		{"another client", "198.51.100.7:4711", "X-Forwarded-For", "198.51.100.8, 10.0.0.1", true},
		{"for= after proto=", "192.0.2.7:4711", "Forwarded", `proto=https;for="192.0.2.7:4711"`, false},
		{"ends at byte 512", "192.0.2.7:4711", "X-Real-Ip", pad(512, "192.0.2.7"), false},
		{"ends at byte 513", "192.0.2.7:4711", "X-Real-Ip", pad(513, "192.0.2.7"), true},
		{"IPv4 in brackets", "192.0.2.7:4711", "X-Real-Ip", "[192.0.2.7]", true},
		{"IPv6 in brackets", "[2001:db8::17]:4711", "X-Real-Ip", "[2001:db8::17]", false},
	} {
		if got := len(forwardingReports(t, tc.remote, tc.header, tc.value)); got != map[bool]int{false: 0, true: 1}[tc.reported] {
			t.Errorf("%s: %d forwarding reports, want reported %v", tc.name, got, tc.reported)
		}
	}
}

// TestSkipPrefixesBracketedExact: a RemoteAddr of an IPv6 address in
// brackets, without a port, is read to its last digit, and only an IPv6
// address is read so: an IPv4 one in brackets, or an address behind one
// bracket only, is no address.
func TestSkipPrefixesBracketedExact(t *testing.T) {
	skip := middleware.SkipPrefixes(netip.MustParsePrefix("2001:db8::17/128"), netip.MustParsePrefix("192.0.2.0/24"))
	for addr, want := range map[string]bool{
		"[2001:db8::17]": true,
		"[2001:db8::1]":  false,
		"[192.0.2.1]":    false,
		"[2001:db8::17x": false,
		"x2001:db8::17]": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = addr
		if got := skip(r); got != want {
			t.Errorf("SkipPrefixes for RemoteAddr %q = %v, want %v", addr, got, want)
		}
	}
}
