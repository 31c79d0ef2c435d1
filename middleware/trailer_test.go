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

// TestTrailerReachesTheHandler: a chunked upload's trailer is in the
// handler's r.Trailer once it has read the body to its end, as it is
// without the middleware, announced in a Trailer header or not (HTTP/1).
// The middleware hands next a copy of the request (the decision in its
// context; one marked unrouted): the map of the trailers announced is
// shared with it, but net/http makes the map of those not announced as
// the body ends, on its own request, and the handler saw none of them
// (internal/timing's copy, under SetFeedback, already gave them). Through
// a ServeMux under net/http: chi serves its middlewares a copy of its
// own, which never sees them, with or without the middleware.
func TestTrailerReachesTheHandler(t *testing.T) {
	for _, wiring := range []string{"none", "default", "WithoutContext", "unrouted", "Feedback"} {
		for _, announce := range []string{"Trailer: X-Sum\r\n", ""} {
			t.Run(fmt.Sprintf("%s/announced %v", wiring, announce != ""), func(t *testing.T) {
				got := make(chan string, 1)
				var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					got <- fmt.Sprintf("%s, X-Sum %q", body, r.Trailer.Get("X-Sum"))
				})
				store, clock := newStore(t)
				p := fixed("p", 100, time.Minute, remote)
				opts := []middleware.Option{middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {})}
				switch wiring {
				case "default", "Feedback":
				case "WithoutContext":
					opts = append(opts, middleware.WithoutContext())
				case "unrouted":
					p = fixed("p", 100, time.Minute, remote, policy.WithRoutes("POST /login"))
				}
				mux := http.NewServeMux()
				mux.Handle("POST /", h)
				h = mux
				if wiring != "none" {
					// Wrapping the ServeMux: the route is not known
					// to it (unrouted).
					m := middleware.MustNew(store, []*policy.Policy{p}, opts...)
					if wiring == "Feedback" {
						m.SetFeedback(feedbackFunc(func(time.Duration, int) {}))
					}
					h = m.Handler(h)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				c, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\n%sTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 7\r\n\r\n", announce)
				res, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if g, want := <-got, `abc, X-Sum "7"`; g != want {
					t.Errorf("the handler saw %s, want %s", g, want)
				}
			})
		}
	}
}
