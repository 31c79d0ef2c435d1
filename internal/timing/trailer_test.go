package timing

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestServeTrailerReachesTheHandler: a chunked upload's trailer is in
// the handler's r.Trailer once it has read the body to its end, as it is
// without Serve, announced in a Trailer header or not (HTTP/1). next
// serves a copy of the request: the map of the trailers announced is
// shared with it, but net/http makes the map of those not announced as
// the body ends, on its own request, and the handler under Serve saw
// none of them.
func TestServeTrailerReachesTheHandler(t *testing.T) {
	for _, tc := range []struct{ name, announce string }{
		{"announced", "Trailer: X-Sum\r\n"},
		{"not announced", ""},
	} {
		for _, served := range []bool{false, true} {
			got := make(chan string, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got <- fmt.Sprintf("%s, X-Sum %q", body, r.Trailer.Get("X-Sum"))
			})
			mux := http.NewServeMux()
			if served {
				mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
					Serve(w, r, h, algotest.NewClock(time.Unix(1_700_000_000, 0)), &recorder{})
				})
			} else {
				mux.Handle("POST /", h)
			}
			srv := httptest.NewServer(mux)
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\n%sTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 7\r\n\r\n", tc.announce)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			c.Close()
			srv.Close()
			if g, want := <-got, `abc, X-Sum "7"`; g != want {
				t.Errorf("trailer %s, through Serve %v: the handler saw %s, want %s", tc.name, served, g, want)
			}
		}
	}
}
