package timing

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// startServer starts a real server of h, over HTTP/2 (TLS) when h2 is set
// and HTTP/1.1 otherwise, with its error log discarded (net/http logs
// superfluous WriteHeader calls and the panics it recovers) and configured
// by config unless it is nil, and returns it and a client of it that
// speaks that protocol only. The caller closes the server.
func startServer(h2 bool, h http.Handler, config func(*http.Server)) (*httptest.Server, *http.Client) {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if config != nil {
		config(srv.Config)
	}
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	client := srv.Client()
	if !h2 {
		client.Transport.(*http.Transport).TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return srv, client
}

// serveStatusOver serves h through ServeStatus (on the writer wrap makes
// of the server's; nil keeps it) on a real server, over HTTP/2 (TLS) when
// h2 is set and HTTP/1.1 otherwise, sends it one GET, and returns the
// status the client received and the one ServeStatus reported.
func serveStatusOver(t *testing.T, h2 bool, wrap func(http.ResponseWriter) http.ResponseWriter, h http.HandlerFunc) (received, reported int) {
	t.Helper()
	statuses := make(chan int, 1)
	srv, client := startServer(h2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wrap != nil {
			w = wrap(w)
		}
		ServeStatus(w, r, h, nil, func(status int, _ bool) { statuses <- status })
	}), nil)
	defer srv.Close()
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

// unwrapOnly is a writer wrapper such as a logging middleware's that
// offers none of the optional interfaces but Unwrap, the way
// [http.ResponseController] reaches them.
type unwrapOnly struct{ http.ResponseWriter }

func (u unwrapOnly) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// hijackPaths are the ways a handler takes over its connection from the
// writer w it is given.
var hijackPaths = []struct {
	name   string
	hijack func(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error)
}{
	{"Hijacker", func(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			return nil, nil, errors.New("not a Hijacker")
		}
		return hj.Hijack()
	}},
	{"ResponseController", func(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
		return http.NewResponseController(w).Hijack()
	}},
	{"ResponseController over the handler's own wrapper", func(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
		return http.NewResponseController(unwrapOnly{w}).Hijack()
	}},
	{"Unwrap chain walked by hand", func(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
		for {
			switch t := w.(type) {
			case http.Hijacker:
				return t.Hijack()
			case interface{ Unwrap() http.ResponseWriter }:
				w = t.Unwrap()
			default:
				return nil, nil, errors.New("no Hijacker down the chain")
			}
		}
	}},
}

// TestServeStatusHijackPaths: ServeStatus reports 101 for a connection
// taken over by any path a handler has to net/http's Hijack, and Serve
// reports nothing, whether the middleware was given net/http's writer or
// one under a wrapper that offers only Unwrap (an outer logging
// middleware's). A path that reached net/http's Hijack past the wrapper
// (through its Unwrap) went unseen: ServeStatus reported 200, Serve a 200
// lasting the connection's life.
func TestServeStatusHijackPaths(t *testing.T) {
	for _, outer := range []struct {
		name string
		wrap func(http.ResponseWriter) http.ResponseWriter
	}{
		{"net/http's writer", nil},
		{"under an Unwrap-only wrapper", func(w http.ResponseWriter) http.ResponseWriter { return unwrapOnly{w} }},
	} {
		for _, path := range hijackPaths {
			if outer.wrap != nil && path.name == "Hijacker" {
				continue // the wrapper offers no Hijacker, nor does ServeStatus's over it
			}
			t.Run(outer.name+"/"+path.name, func(t *testing.T) {
				var served sync.WaitGroup // Serve has returned
				served.Add(1)
				rec := &recorder{}
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// The controller still reaches the methods down the chain.
					if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					conn, buf, err := path.hijack(w)
					if err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					defer conn.Close()
					buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: example\r\n\r\n")
					buf.Flush()
				})
				received, reported := serveStatusOver(t, false, outer.wrap, func(w http.ResponseWriter, r *http.Request) {
					defer served.Done()
					Serve(w, r, h, algotest.NewClock(time.Unix(1_700_000_000, 0)), rec)
				})
				served.Wait()
				if received != http.StatusSwitchingProtocols || reported != http.StatusSwitchingProtocols || len(rec.got) != 0 {
					t.Errorf("client received %d, ServeStatus reported %d, Serve %v; want 101, 101 and nothing", received, reported, rec.got)
				}
			})
		}
	}
}

// TestServeStatusNoHijackerDownTheChain: over a wrapper that offers only
// Unwrap and no Hijacker down its chain (HTTP/2's writer), the handler's
// writer still offers no hijack, by assertion or through Unwrap.
func TestServeStatusNoHijackerDownTheChain(t *testing.T) {
	var status int
	ServeStatus(unwrapOnly{&http2Writer{}}, httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, asserted := w.(http.Hijacker)
		_, unwrapped := w.(interface{ Unwrap() http.ResponseWriter }).Unwrap().(http.Hijacker)
		_, _, err := http.NewResponseController(w).Hijack()
		if asserted || unwrapped || !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Hijacker by assertion %v, on Unwrap %v; ResponseController.Hijack: %v; want none and http.ErrNotSupported", asserted, unwrapped, err)
		}
	}), nil, func(s int, _ bool) { status = s })
	if status != http.StatusOK {
		t.Errorf("reported %d, want 200", status)
	}
}

// testNotifier gives a test writer http.CloseNotifier.
type testNotifier struct{ ch chan bool }

func (c testNotifier) CloseNotify() <-chan bool { return c.ch }

// TestServeKeepsCloseNotifier: the handler's writer is an
// [http.CloseNotifier] when, and only when, the writer it would have been
// given is one (net/http's are, over HTTP/1 and HTTP/2), and CloseNotify
// gives that writer's channel; the writer's other interfaces stay as they
// were. The wrapper dropped it, and code that asserts it (gin's
// Context.Stream) panicked.
func TestServeKeepsCloseNotifier(t *testing.T) {
	ch := make(chan bool)
	type caps struct{ hijacker, pusher, closeNotifier bool }
	for _, tc := range []struct {
		name string
		w    http.ResponseWriter
		want caps
	}{
		{"HTTP/1", &http1Writer{}, caps{hijacker: true}},
		{"HTTP/1 notifying", &struct {
			http1Writer
			testNotifier
		}{testNotifier: testNotifier{ch}}, caps{hijacker: true, closeNotifier: true}},
		{"HTTP/2", &http2Writer{}, caps{pusher: true}},
		{"HTTP/2 notifying", &struct {
			http2Writer
			testNotifier
		}{testNotifier: testNotifier{ch}}, caps{pusher: true, closeNotifier: true}},
		{"bare", &bareWriter{}, caps{}},
		{"bare notifying", &struct {
			bareWriter
			testNotifier
		}{testNotifier: testNotifier{ch}}, caps{closeNotifier: true}},
	} {
		for _, serve := range []struct {
			name  string
			serve func(w http.ResponseWriter, h http.HandlerFunc)
		}{
			{"Serve", func(w http.ResponseWriter, h http.HandlerFunc) { serve(h, w) }},
			{"ServeStatus", func(w http.ResponseWriter, h http.HandlerFunc) {
				ServeStatus(w, httptest.NewRequest("GET", "/", nil), h, nil, func(int, bool) {})
			}},
		} {
			var got caps
			var notified <-chan bool
			serve.serve(tc.w, func(w http.ResponseWriter, r *http.Request) {
				_, got.hijacker = w.(http.Hijacker)
				_, got.pusher = w.(http.Pusher)
				//lint:ignore SA1019 the deprecated interface is what the test is about
				cn, ok := w.(http.CloseNotifier)
				if got.closeNotifier = ok; ok {
					notified = cn.CloseNotify()
				}
			})
			if got != tc.want || got.closeNotifier && notified != (<-chan bool)(ch) {
				t.Errorf("%s over a %s writer: handler saw %+v (CloseNotify's channel the writer's: %v); want %+v",
					serve.name, tc.name, got, notified == (<-chan bool)(ch), tc.want)
			}
		}
	}
}

// TestServeStatusCloseNotifierServed: over a real server, HTTP/1.1 and
// HTTP/2, the handler's writer is net/http's CloseNotifier.
func TestServeStatusCloseNotifierServed(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		received, reported := serveStatusOver(t, h2, nil, func(w http.ResponseWriter, r *http.Request) {
			//lint:ignore SA1019 the deprecated interface is what the test is about
			cn, ok := w.(http.CloseNotifier)
			if !ok {
				http.Error(w, "not a CloseNotifier", http.StatusInternalServerError)
				return
			}
			select {
			case <-cn.CloseNotify():
				http.Error(w, "closed", http.StatusInternalServerError)
			default:
			}
		})
		if received != http.StatusOK || reported != http.StatusOK {
			t.Errorf("HTTP/2 %v: client received %d, ServeStatus reported %d; want 200 (a CloseNotifier)", h2, received, reported)
		}
	}
}

// TestServeStatusBefore: ServeStatus tells before the first final status
// while the writer's headers can still change (a header set there reaches
// the response), once; done's sent is false only when the
// handler returned having written nothing, so that the headers are still
// to be sent.
func TestServeStatusBefore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      http.HandlerFunc
		before []int // the statuses before is told
		sent   bool
	}{
		{"written", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			w.WriteHeader(http.StatusOK)
		}, []int{429}, true},
		{"body only", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }, []int{200}, true},
		{"flushed", func(w http.ResponseWriter, r *http.Request) { http.NewResponseController(w).Flush() }, []int{200}, true},
		{"nothing", func(w http.ResponseWriter, r *http.Request) {}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			var before []int
			var sent bool
			ServeStatus(w, httptest.NewRequest("GET", "/", nil), tc.h, func(status int) {
				before = append(before, status)
				w.Header().Set("X-Before", strconv.Itoa(status))
			}, func(_ int, s bool) { sent = s })
			if !slices.Equal(before, tc.before) || sent != tc.sent {
				t.Errorf("before told %v, sent %v; want %v, %v", before, sent, tc.before, tc.sent)
			}
			if len(tc.before) > 0 && w.Result().Header.Get("X-Before") != strconv.Itoa(tc.before[0]) || len(tc.before) == 0 && w.Result().Header.Get("X-Before") != "" {
				t.Errorf("the header set in before is not in the response: %v", w.Result().Header)
			}
		})
	}
}
