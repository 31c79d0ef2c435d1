package timing

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

// serveStatusOver serves h through ServeStatus (on the writer wrap makes
// of the server's; nil keeps it) on a real server, over HTTP/2 (TLS) when
// h2 is set and HTTP/1.1 otherwise, sends it one GET, and returns the
// status the client received and the one ServeStatus reported.
func serveStatusOver(t *testing.T, h2 bool, wrap func(http.ResponseWriter) http.ResponseWriter, h http.HandlerFunc) (received, reported int) {
	t.Helper()
	statuses := make(chan int, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wrap != nil {
			w = wrap(w)
		}
		ServeStatus(w, r, h, func(status int) { statuses <- status })
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // superfluous WriteHeader calls are logged
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()
	client := srv.Client()
	if !h2 {
		client.Transport.(*http.Transport).TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if wantMajor := map[bool]int{false: 1, true: 2}[h2]; resp.ProtoMajor != wantMajor {
		t.Fatalf("response over %s, want HTTP/%d", resp.Proto, wantMajor)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols { // its body is the connection
		io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	return resp.StatusCode, <-statuses
}

// TestServeStatusSwitchingProtocols: 101 is a final status over HTTP/1.1
// (net/http sends no other header after it, and its client takes it as
// the response), so ServeStatus reports it; over HTTP/2, where net/http
// sends a 1xx of any code as informational, the status after it is the
// response's. ServeStatus ignored every 1xx, 101 too, and reported 200 (or
// the later status net/http did not send) for a 101 answered over HTTP/1.1.
func TestServeStatusSwitchingProtocols(t *testing.T) {
	upgrade := func(then int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", "example")
			w.WriteHeader(http.StatusSwitchingProtocols)
			if then != 0 {
				w.Header().Del("Connection")
				w.Header().Del("Upgrade")
				w.WriteHeader(then)
			}
		}
	}
	for _, tc := range []struct {
		name string
		h2   bool
		then int // a status written after the 101, if any
		want int // received and reported
	}{
		{"HTTP/1.1, 101 only", false, 0, http.StatusSwitchingProtocols},
		{"HTTP/1.1, 101 then 403", false, http.StatusForbidden, http.StatusSwitchingProtocols},
		{"HTTP/2, 101 then 403", true, http.StatusForbidden, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			received, reported := serveStatusOver(t, tc.h2, nil, upgrade(tc.then))
			if received != tc.want || reported != tc.want {
				t.Errorf("client received %d and ServeStatus reported %d; want %d both", received, reported, tc.want)
			}
		})
	}
}
