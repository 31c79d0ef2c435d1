package client_test

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/client"
)

// New takes a nil next RoundTripper as http.DefaultTransport, and so a nil
// *http.Transport passed as one (a variable set only when the caller
// configures a transport of its own): as the package's other constructors
// check their interfaces, the nil pointer does not wait for the first
// request to panic.
func TestNewTypedNilNextIsDefault(t *testing.T) {
	var base *http.Transport // never configured
	tr, err := client.New(base)
	if err != nil {
		t.Fatalf("New(nil *http.Transport) = %v", err)
	}
	srv := newStub(t, newAutoClock(), nil)
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("RoundTrip through New(nil *http.Transport) panicked: %v", p)
			}
		}()
		tr.CloseIdleConnections()
		if status, body, err := get(&http.Client{Transport: tr}, srv.URL); err != nil || status != 200 || body != "ok" {
			t.Errorf("GET = %d %q %v, want 200 \"ok\"", status, body, err)
		}
	}()
}
