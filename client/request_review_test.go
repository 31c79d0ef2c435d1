package client_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// After retries the response names the caller's request, as net/http's
// own Transport does after its internal retries (resp.Request = the
// request RoundTrip was given), not the copy the Transport made for the
// retry; and the caller's request is left as it was: method, URL, header,
// body, context. So it is on a give-up, whose response is the last
// refusal.
func TestResponseNamesTheCallersRequestAfterRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		refusal  int // attempts refused
		attempts int // attempts sent
		status   int // the status RoundTrip returns
		ra       string
		opts     []client.Option
	}{
		{"served on the third attempt", 2, 3, http.StatusOK, "1", nil},
		{"given up after every retry", 100, 1 + client.DefaultRetries, http.StatusTooManyRequests, "1", nil},
		// The retry's turn would come after the maximum wait: the last
		// refusal comes back, as read before the wait.
		{"given up waiting for the retry's turn", 100, 1, http.StatusTooManyRequests, "0",
			[]client.Option{client.WithRate(1, time.Minute), client.WithMaxWait(10 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n <= tc.refusal {
					w.Header().Set("Retry-After", tc.ra)
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, "slow down")
					return
				}
				io.WriteString(w, "ok")
			})
			_, tr := newClient(t, clock, tc.opts...)
			req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/things?id=7", strings.NewReader("payload"))
			req.Header.Set("X-Caller", "me")
			ctx, body, header, url := req.Context(), req.Body, req.Header.Clone(), req.URL.String()
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if b, err := io.ReadAll(resp.Body); err != nil || (tc.status != http.StatusOK && string(b) != "slow down") {
				t.Errorf("the body reads %q, %v", b, err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if resp.Request != req {
				t.Errorf("resp.Request is %p, not the caller's request %p", resp.Request, req)
			}
			if req.Method != http.MethodPut || req.URL.String() != url || req.Context() != ctx || req.Body != body ||
				len(req.Header) != len(header) || req.Header.Get("X-Caller") != "me" {
				t.Errorf("the caller's request changed: %s %s %v %v", req.Method, req.URL, req.Header, req.Body)
			}
			if got := srv.received(); len(got) != tc.attempts || got[len(got)-1] != "payload" {
				t.Errorf("the server received %q, want %d times the payload", got, tc.attempts)
			}
		})
	}
}
