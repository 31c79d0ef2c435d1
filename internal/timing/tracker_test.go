package timing

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// tracker records the calls a Tracker gets, in order.
type tracker struct{ calls []string }

func (t *tracker) Observe(latency time.Duration, status int) {
	t.calls = append(t.calls, fmt.Sprintf("observe %d", status))
}

func (t *tracker) Begin() interface{ End() } {
	t.calls = append(t.calls, "begin")
	return span{t}
}

type span struct{ t *tracker }

func (s span) End() { s.t.calls = append(s.t.calls, "end") }

// hijackRecorder is a ResponseRecorder that can be hijacked.
type hijackRecorder struct{ *httptest.ResponseRecorder }

func (hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, _ := net.Pipe()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

// TestServeTracker: a Tracker is told each request's beginning before its
// handler runs, and its end last, whether Serve observes the request or
// not (hijacked, or dropped after its client went away): a request it
// counts in flight must not stay so for ever. A hijacked one ends as the
// connection is taken: the handler may serve it for hours.
func TestServeTracker(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		w    http.ResponseWriter
		ctx  context.Context
		h    http.HandlerFunc
		want string
	}{
		{"answered", httptest.NewRecorder(), context.Background(), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
		}, "begin handler observe 418 end"},
		{"panicked", httptest.NewRecorder(), context.Background(), func(w http.ResponseWriter, r *http.Request) {
			panic("boom")
		}, "begin handler observe 500 end"},
		{"client gone", httptest.NewRecorder(), canceled, func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		}, "begin handler end"},
		// Over as the connection is taken (a WebSocket served by the
		// handler for as long as it lasts).
		{"hijacked", hijackRecorder{httptest.NewRecorder()}, context.Background(), func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
		}, "begin handler end served"},
		{"hijacked past a wrapper", unwrapOnly{hijackRecorder{httptest.NewRecorder()}}, context.Background(), func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
		}, "begin handler end served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracker{}
			h := func(w http.ResponseWriter, r *http.Request) {
				tr.calls = append(tr.calls, "handler")
				tc.h(w, r)
				if strings.HasPrefix(tc.name, "hijacked") {
					tr.calls = append(tr.calls, "served")
				}
			}
			func() {
				defer func() { recover() }()
				Serve(tc.w, httptest.NewRequest("GET", "/", nil).WithContext(tc.ctx), http.HandlerFunc(h), algotest.NewClock(time.Unix(1_700_000_000, 0)), tr)
			}()
			if got := strings.Join(tr.calls, " "); got != tc.want {
				t.Errorf("calls %q, want %q", got, tc.want)
			}
		})
	}
}

// panicClock panics when read.
type panicClock struct{}

func (panicClock) Now() time.Time { panic("clock") }

// TestServeTrackerEndsWhenTheClockPanics: Serve read its clock between
// the Tracker's Begin and the deferred End: a clock that panics (an
// injected one) left the request in flight for ever.
func TestServeTrackerEndsWhenTheClockPanics(t *testing.T) {
	tr := &tracker{}
	func() {
		defer func() {
			if p := recover(); p != "clock" {
				t.Fatalf("recovered %v, want the clock's panic", p)
			}
		}()
		Serve(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), http.NotFoundHandler(), panicClock{}, tr)
	}()
	if got := strings.Join(tr.calls, " "); got != "begin end" {
		t.Errorf("calls %q, want %q", got, "begin end")
	}
}
