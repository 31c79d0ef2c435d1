package client_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/ratekeeper/ratekeeper/client"
)

// A URL with a port but no host name ("http://:8080/", which net/http
// dials on the local system) is keyed by its port like any other: the
// port's leading zeros go, as the dialer reads the port as a number, so
// "http://:008080/" shares the queue of "http://:8080/", the server both
// reach. Kills options.go:95's i > 0 and i >= 1, which took a colon first
// in the host for part of the name and kept ":008080" apart.
func TestHostKeyNoHostName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	plain, padded := "http://:"+u.Port()+"/", "http://:00"+u.Port()+"/"
	for _, raw := range []string{plain, padded} {
		resp, err := srv.Client().Get(raw)
		if err != nil {
			t.Fatalf("GET %s: %v (net/http should reach the local server)", raw, err)
		}
		resp.Body.Close()
		pu, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := client.HostKey(&http.Request{URL: pu}), ":"+u.Port(); got != want {
			t.Errorf("HostKey(%s) = %q, want %q", raw, got, want)
		}
	}
}

// A bracketed host that is no IPv6 address is keyed by its lower-cased
// form, as it is (a link-local address with its zone is keyed so because
// that is its canonical form, see TestHostKeyZonedIPv6). Kills options.go:109's deleted strings.ToLower(host),
// which keyed them "" (and "" exempts a request from pacing and holds).
func TestHostKeyBracketsNotAnAddress(t *testing.T) {
	for _, tc := range []struct{ scheme, host, want string }{
		{"http", "[fe80::1%eth0]:8080", "[fe80::1%eth0]:8080"},
		{"https", "[fe80::1%eth0]", "[fe80::1%eth0]"},
		{"http", "[Not.An.Address]", "[not.an.address]"},
	} {
		r := &http.Request{URL: &url.URL{Scheme: tc.scheme, Host: tc.host}}
		if got := client.HostKey(r); got != tc.want {
			t.Errorf("HostKey(%s://%s) = %q, want %q", tc.scheme, tc.host, got, tc.want)
		}
	}
}

// A URL with no host name and its scheme's default port (http://:80/,
// which net/http dials on the local system) keeps the port in its key: the
// key "" would exempt its requests from pacing and from the holds the
// server asks for.
func TestHostKeyNoHostNameDefaultPort(t *testing.T) {
	for _, tc := range []struct{ scheme, host, want string }{
		{"http", ":80", ":80"},
		{"http", ":0080", ":80"},
		{"HTTPS", ":443", ":443"},
		{"https", ":80", ":80"},
	} {
		r := &http.Request{URL: &url.URL{Scheme: tc.scheme, Host: tc.host}}
		if got := client.HostKey(r); got != tc.want {
			t.Errorf("HostKey(%s://%s) = %q, want %q", tc.scheme, tc.host, got, tc.want)
		}
	}
}

// A zoned IPv6 literal is keyed in its canonical form with its zone as
// written: "[FE80:0::1%25eth0]" and "[fe80::1%25eth0]" are one address on
// one interface and share a queue, while the zone keeps its case, since
// interface names are case-sensitive ("eth0" and "ETH0" may be two
// interfaces, or one and none). An IPv4-mapped one is dialled over IPv4,
// where a zone means nothing: it is keyed as the IPv4 address.
func TestHostKeyZonedIPv6(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://[fe80::1%25eth0]:8080/", "[fe80::1%eth0]:8080"},
		{"http://[FE80:0:0::0001%25eth0]:8080/", "[fe80::1%eth0]:8080"},
		{"https://[FE80::1%25ETH0]:443/", "[fe80::1%ETH0]"},
		{"https://[fe80::1%25ETH0]/", "[fe80::1%ETH0]"},
		{"https://[::ffff:192.0.2.1%25eth0]/", "192.0.2.1"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := client.HostKey(&http.Request{URL: u}); got != tc.want {
			t.Errorf("HostKey(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
