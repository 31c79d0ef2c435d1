package middleware_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTrailerUntouchedWhenPassedAsItCame: the middleware readies the
// request it is handed for the trailer of a chunked body to reach the copy
// it hands next (see TestTrailerReachesTheHandler), by giving it an empty
// Trailer map. It did so for every chunked request, also one no policy
// applied to, which it passes on as it came: it wrote the caller's
// request for nothing, and the handler saw a Trailer map (empty) before
// it read the body, where without the middleware it sees none (nil) until
// the body ends with a trailer no Trailer header announced. Such a request
// is now passed on untouched. Through a ServeMux under net/http (HTTP/1),
// the middleware around it asking it for the route.
func TestTrailerUntouchedWhenPassedAsItCame(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("middleware %v", wrapped), func(t *testing.T) {
			got := make(chan string, 1)
			mux := http.NewServeMux()
			mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
				before := r.Trailer == nil
				body, _ := io.ReadAll(r.Body)
				got <- fmt.Sprintf("no Trailer before the body %v; %s, X-Sum %q", before, body, r.Trailer.Get("X-Sum"))
			})
			var h http.Handler = mux
			if wrapped {
				store, clock := newStore(t)
				login := fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))
				m := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithClock(clock),
					middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
				h = m.Handler(mux)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprint(c, "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 7\r\n\r\n")
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if g, want := <-got, `no Trailer before the body true; abc, X-Sum "7"`; g != want {
				t.Errorf("the handler saw %s, want %s (as without the middleware)", g, want)
			}
		})
	}
}
