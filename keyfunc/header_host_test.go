package keyfunc_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestHeader_Host: net/http moves the Host header of an incoming request
// to r.Host and out of r.Header, so Header("Host") (a key per tenant
// host name, "key: header:Host" in a config file) found no key on any
// request, and every one was rejected. It reads r.Host.
func TestHeader_Host(t *testing.T) {
	for _, name := range []string{"Host", "host"} {
		f := keyfunc.Must(keyfunc.Header(name))
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: tenant.example.com\r\n\r\n")))
		if err != nil {
			t.Fatal(err)
		}
		wantKey(t, f, r, "tenant.example.com", nil)
		// HTTP/1.0 without a Host header: no key.
		r, err = http.ReadRequest(bufio.NewReader(strings.NewReader("GET / HTTP/1.0\r\n\r\n")))
		if err != nil {
			t.Fatal(err)
		}
		wantKey(t, f, r, "", keyfunc.ErrNoKey)
	}
}
