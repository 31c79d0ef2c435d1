package keyfunc_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestFromHeaderRefusesHost: net/http moves the Host header of an incoming
// request into r.Host and out of the header map (the server below shows
// it), so FromHeader("Host") never found a value: every request from a
// trusted proxy had no client IP (a 400 under the default key action),
// whatever the proxy sent. Host names the server asked for, not the
// client, so IP refuses it, as it refuses the list headers.
func TestFromHeaderRefusesHost(t *testing.T) {
	var inMap bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, inMap = r.Header["Host"]
	}))
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "192.0.2.1"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if inMap {
		t.Fatal("the server's handler found Host in the header map; net/http no longer moves it to r.Host")
	}

	proxies := keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))
	for _, h := range []string{"Host", "host", "HOST"} {
		f, err := keyfunc.IP(proxies, keyfunc.FromHeader(h))
		wantRefused(t, "IP(TrustedProxies(10.0.0.0/8), FromHeader(\""+h+"\"))", f, err,
			`keyfunc: IP: FromHeader("Host"): Host names the server the request is for, not the client, and net/http moves it out of the header map (to r.Host)`)
	}
}
