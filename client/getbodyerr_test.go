package client_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// A retry whose body cannot be had again (GetBody fails) ends RoundTrip
// with that error, wrapped ("client: replaying the request body: "), not
// with the refusal: nothing more is sent, the refusal's body is closed, and
// the place the retry took at its key's gate as it began to wait for the
// server's hold (with pacing and proactive pacing) is given up, so that
// the next request of the key goes when the hold ends, not stuck behind a
// place nobody holds.
func TestRetryGetBodyErrorLeavesNothingBehind(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "2" }))
	tracker := &closeTracker{next: http.DefaultTransport}
	tr, err := client.New(tracker, client.WithClock(clock), client.WithRate(10, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	boom := errors.New("body gone")
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("v=1"))
	req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
	resp, err := tr.RoundTrip(req)
	if resp != nil || !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "client: replaying the request body: ") {
		t.Fatalf("RoundTrip = %v, %v; want the wrapped GetBody error", resp, err)
	}
	if n := tr.AtGate(); n != 0 {
		t.Errorf("%d places left at the gate, want 0", n)
	}
	if opened, closed := tracker.counts(); opened != 1 || closed != 1 {
		t.Errorf("%d response bodies opened, %d closed; want 1 and 1", opened, closed)
	}
	// The next request waits for the 2s hold the refusal set, and goes.
	next, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(next)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if err := hangguard.Await(t, done, waitBound, "the next request of the key returned"); err != nil {
		t.Fatal(err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}
