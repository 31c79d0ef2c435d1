package timing

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestServeClockSetBack: Serve tells its observer how long the handler
// took, read on the clock it is given. A clock without a monotonic reading
// (a test's, a replay's, one a user injects into the middleware) can be set
// back while a request runs; the latency reported must not be negative,
// which is no time a handler can take (an observer given it, such as the
// middleware's SetFeedback function, may sum or bucket it). It reads as 0.
func TestServeClockSetBack(t *testing.T) {
	for _, back := range []time.Duration{time.Nanosecond, time.Hour} {
		clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
		rec := &recorder{}
		Serve(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clock.Set(clock.Now().Add(-back))
			w.WriteHeader(http.StatusNoContent)
		}), clock, rec)
		if fmt.Sprint(rec.got) != "[204/0s]" {
			t.Errorf("clock set back %s during the request: reported %v, want [204/0s]", back, rec.got)
		}
	}
	// A clock that stands still: 0 as well, and one that moves: its span.
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	rec := &recorder{}
	for _, d := range []time.Duration{0, time.Nanosecond} {
		Serve(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clock.Advance(d)
		}), clock, rec)
	}
	if fmt.Sprint(rec.got) != "[200/0s 200/1ns]" {
		t.Errorf("a still and a moving clock: reported %v, want [200/0s 200/1ns]", rec.got)
	}
}
