package client_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// TestRedirectChainRetryAftersBoundedTogether: a server whose every
// response is a 307 to the next hop with Retry-After: 40 (each within the
// maximum wait of a minute and WithMaxRetryAfter) holds one Client.Do
// for as long as its redirects go on: the http.Client follows ten, 400 s
// of waits where the maximum wait is 60 s. The waits the redirects of one
// chain ask for are waits the caller's one request makes before it is
// sent, all of them together (WithMaxWait): the second hop's 40 s would
// take the chain to 80 s, a held *WaitError of 80 s, unsent, after the
// first 40 s alone.
func TestRedirectChainRetryAftersBoundedTogether(t *testing.T) {
	clock := newAutoClock()
	var a *stub
	a = newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		hop, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		w.Header().Set("Retry-After", "40")
		http.Redirect(w, r, a.URL+"/hop/"+strconv.Itoa(hop+1), http.StatusTemporaryRedirect)
	})
	hc, _ := newClient(t, clock)
	resp, err := hc.Get(a.URL + "/hop/0")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want a held *WaitError", resp.StatusCode)
	}
	var we *client.WaitError
	if !errors.As(err, &we) || !we.Held || we.Wait != 80*time.Second || we.MaxWait != time.Minute {
		t.Fatalf("got %v, want a held *WaitError of 80s (40s waited, 40s more) under the maximum wait of 1m", err)
	}
	if got, want := a.arrivals(), []time.Duration{0, 40 * time.Second}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the host received requests at %v, want %v", got, want)
	}
}
