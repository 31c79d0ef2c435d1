package timing

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// failingSource is a backend body whose first read fails.
type failingSource struct{}

var errSource = errors.New("timing test: the backend's body failed")

func (failingSource) Read([]byte) (int, error) { return 0, errSource }

// copiesNothing are handlers that copy a source to w with io.Copy
// (through the writer's ReadFrom over HTTP/1) before any status, the
// source giving nothing, and then answer a status of their own: net/http
// sent nothing for the copy (its ReadFrom copies the first bytes through
// Write, and there were none), so the client receives the later status.
var copiesNothing = []struct {
	name string
	h    http.HandlerFunc
	want int
}{
	{"source failing", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(w, failingSource{}); err != nil {
			http.Error(w, "bad gateway", http.StatusBadGateway)
		}
	}, http.StatusBadGateway},
	{"source empty", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, struct{ io.Reader }{strings.NewReader("")}) // no WriterTo: ReadFrom
		w.WriteHeader(http.StatusNoContent)
	}, http.StatusNoContent},
	{"source with a body", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, struct{ io.Reader }{strings.NewReader("body")})
		w.WriteHeader(http.StatusNoContent) // superfluous: the copy sent 200
	}, http.StatusOK},
}

// TestServeStatusCopyOfNothingSendsNoStatus: ServeStatus reports the status
// the client received when the handler's io.Copy to the writer copied
// nothing and the handler answered after it. Over HTTP/1, where the copy
// goes through the writer's ReadFrom, ServeStatus took the copy for a
// 200 as it began: a handler that answered 502 after its backend's body
// failed was reported 200 (a failure given back under
// policy.CountFailed), and one that answered 204 after an empty copy,
// 200. HTTP/2's writer has no ReadFrom: the copy's Writes said it right.
func TestServeStatusCopyOfNothingSendsNoStatus(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, tc := range copiesNothing {
			t.Run(map[bool]string{false: "HTTP/1", true: "HTTP/2"}[h2]+"/"+tc.name, func(t *testing.T) {
				received, reported := serveStatusOver(t, h2, nil, tc.h)
				if received != tc.want || reported != tc.want {
					t.Errorf("client received %d, ServeStatus reported %d; want %d", received, reported, tc.want)
				}
			})
		}
	}
}

// statusOnly is an Observer that keeps the status it is told.
type statusOnly chan int

func (s statusOnly) Observe(_ time.Duration, status int) { s <- status }

// TestServeCopyOfNothingSendsNoStatus: the same through Serve, whose
// ReadFrom copies a source it reads in its own time through its Write.
// It too took the copy for a 200 as it began, and so a Feedback (the
// adaptive controller) was told of a success for a 502.
func TestServeCopyOfNothingSendsNoStatus(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, tc := range copiesNothing {
			t.Run(map[bool]string{false: "HTTP/1", true: "HTTP/2"}[h2]+"/"+tc.name, func(t *testing.T) {
				observed := make(statusOnly, 1)
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				srv, client := startServer(h2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					Serve(w, r, tc.h, clock, observed)
				}), nil)
				defer srv.Close()
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if got := <-observed; resp.StatusCode != tc.want || got != tc.want {
					t.Errorf("client received %d, Serve observed %d; want %d", resp.StatusCode, got, tc.want)
				}
			})
		}
	}
}
