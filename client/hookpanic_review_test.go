package client_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/client"
)

// An OnRetry hook that panics takes RoundTrip down with it, but not the
// refusal's connection: the body of the response it was told of is read
// and closed, as for any retry, so that the connection goes back to the
// pool rather than being held open with nobody to close it.
func TestPanickingOnRetryClosesTheRefusal(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, "slow down")
	})
	ct := &closeTracker{next: http.DefaultTransport}
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	tr, err := client.New(ct, client.WithClock(clock), client.WithOnRetry(func(client.Retry) { panic("hook broke") }))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	func() {
		defer func() {
			if p := recover(); p != "hook broke" {
				t.Errorf("RoundTrip panicked with %v, want the hook's panic", p)
			}
		}()
		resp, _ := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
	}()
	if opened, closed := ct.counts(); opened != 1 || closed != 1 {
		t.Errorf("%d response bodies opened, %d closed; want the one refusal's closed", opened, closed)
	}
}
