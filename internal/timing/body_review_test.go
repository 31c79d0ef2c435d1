package timing

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestServeRejectedUploadNotAskedFor: a handler that rejects an upload
// without reading it (a 401 page over net/http's 2 KiB buffer, so that its
// header goes out while the handler runs) answers at once, as it does
// without Serve: net/http, seeing the request's own body unread and the
// client waiting for "100 Continue", closes the connection after the
// response instead of asking for the body. Through ServeMux (no copy of
// the request) to Serve, the server saw Serve's wrapper as the request's
// body and read the upload before the 401 (the client, waiting for "100
// Continue", sent nothing: no response at all).
func TestServeRejectedUploadNotAskedFor(t *testing.T) {
	for _, served := range []bool{false, true} {
		name := "plain"
		if served {
			name = "Serve"
		}
		t.Run(name, func(t *testing.T) {
			reject := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(strings.Repeat("x", 8<<10)))
			})
			var h http.Handler = reject
			if served {
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					Serve(w, r, reject, clock, &recorder{})
				})
			}
			mux := http.NewServeMux()
			mux.Handle("/", h)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			// A guard, not a wait: the answer is written at once, and
			// the bug leaves the server reading a body never sent.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				t.Fatalf("no response (%v): the server waits for the body", err)
			}
			if got, want := strings.TrimSpace(line), "HTTP/1.1 401 Unauthorized"; got != want {
				t.Errorf("first line of the response: %q, want %q", got, want)
			}
		})
	}
}
