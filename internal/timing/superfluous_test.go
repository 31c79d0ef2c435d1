package timing_test

import (
	"crypto/tls"
	"github.com/ratekeeper/ratekeeper/internal/logbuf"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/timing"
)

// lockedBuffer is a log buffer written by other goroutines while the
// test reads it.
type lockedBuffer = logbuf.Buffer

// TestSuperfluousWriteHeaderNamesTheHandler: a handler that calls
// WriteHeader after its response began (a Write, or a WriteHeader before)
// makes net/http log "http: superfluous response.WriteHeader call from"
// the first function outside net/http on the stack: that was the
// statusWriter, so that the server's log blamed the middleware
// (internal/timing.(*statusWriter).WriteHeader) for its handler's mistake,
// as users of other middlewares have reported theirs. The statusWriter
// now tells it as net/http would, naming the handler, on the server's
// ErrorLog, and passes the call on no further. Over HTTP/2, where
// net/http drops the call without a word, nothing is logged. Through
// Serve and ServeStatus.
func TestSuperfluousWriteHeaderNamesTheHandler(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"after a Write": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok"))
			w.WriteHeader(http.StatusInternalServerError)
		},
		"after a WriteHeader": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusInternalServerError)
		},
	}
	serves := map[string]func(http.Handler) http.Handler{
		"Serve": func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				timing.Serve(w, r, h, algotest.NewClock(time.Unix(1_700_000_000, 0)), quietObserver{})
			})
		},
		"ServeStatus": func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				timing.ServeStatus(w, r, h, nil, func(int, bool) {})
			})
		},
	}
	for hname, h := range handlers {
		for sname, serve := range serves {
			for _, h2 := range []bool{false, true} {
				var logged lockedBuffer
				srv := httptest.NewUnstartedServer(serve(h))
				srv.Config.ErrorLog = log.New(&logged, "", 0)
				srv.EnableHTTP2 = h2
				srv.StartTLS()
				client := srv.Client()
				if !h2 {
					client.Transport.(*http.Transport).TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
				}
				resp, err := client.Get(srv.URL)
				if err != nil {
					srv.Close()
					t.Fatal(err)
				}
				resp.Body.Close()
				srv.Close()
				got := logged.String()
				if h2 {
					// net/http's HTTP/2 server drops the call silently.
					if got != "" {
						t.Errorf("%s, %s, h2: the server logged %q; want nothing, as net/http over HTTP/2", hname, sname, got)
					}
				} else if !strings.Contains(got, "http: superfluous response.WriteHeader call from github.com/ratekeeper/ratekeeper/internal/timing_test.TestSuperfluousWriteHeaderNamesTheHandler.func") ||
					!strings.Contains(got, "(superfluous_test.go:") || strings.Count(got, "superfluous response") != 1 {
					t.Errorf("%s, %s, h2=%v: the server logged %q; want one superfluous WriteHeader naming the handler in superfluous_test.go", hname, sname, h2, got)
				}
				if resp.StatusCode == http.StatusInternalServerError {
					t.Errorf("%s, %s, h2=%v: status %d: the superfluous call changed the status", hname, sname, h2, resp.StatusCode)
				}
			}
		}
	}
}

// quietObserver is a timing.Observer that is told nothing it keeps.
type quietObserver struct{}

func (quietObserver) Observe(time.Duration, int) {}
