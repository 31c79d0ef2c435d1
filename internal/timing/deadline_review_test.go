package timing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestServeDeadlinePanicReported: a handler that panics once the request's
// deadline has passed (a server-side timeout, such as chi's
// middleware.Timeout, cut a reverse proxy's copy from a slow backend, or
// the handler failed on its timed-out call) ran out of the time the server
// gives a request: that is a sign of the server's health, reported as a
// 500 with its latency. Only a client that went away (the context
// canceled) says nothing of it; Serve dropped both alike, so an overloaded
// backend's slowest requests went unseen by the health observers.
func TestServeDeadlinePanicReported(t *testing.T) {
	for _, p := range []any{http.ErrAbortHandler, errors.New("nil result after timeout")} {
		clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
		rec := &recorder{}
		ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0)) // already passed
		defer cancel()
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		func() {
			defer func() { recover() }()
			Serve(httptest.NewRecorder(), r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clock.Advance(7 * time.Millisecond)
				panic(p)
			}), clock, rec)
		}()
		if fmt.Sprint(rec.got) != "[500/7ms]" {
			t.Errorf("panic %v after the deadline: reported %v, want [500/7ms]", p, rec.got)
		}
	}
}
