package client_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// TestRetryAfterOnUnfollowedThreeXXHoldsNothing: a Retry-After on a 3xx
// that is not followed (a 304 Not Modified, or a 307 whose CheckRedirect
// returns http.ErrUseLastResponse) asks for no wait before any request:
// the response comes back at once and the next request to the host goes
// at once too (no hold, no sleep).
func TestRetryAfterOnUnfollowedThreeXXHoldsNothing(t *testing.T) {
	for _, tc := range []struct {
		status    int
		proactive bool
	}{{http.StatusNotModified, false}, {http.StatusNotModified, true}, {http.StatusTemporaryRedirect, false}, {http.StatusTemporaryRedirect, true}} {
		status := tc.status
		t.Run(http.StatusText(status)+map[bool]string{true: "/proactive", false: "/plain"}[tc.proactive], func(t *testing.T) {
			clock := newAutoClock()
			a := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "30")
				if status == http.StatusTemporaryRedirect {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(status)
			})
			hc, _ := newClient(t, clock, client.WithProactive(tc.proactive))
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			for i := range 2 {
				resp, err := hc.Get(a.URL + "/x")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != status {
					t.Fatalf("request %d: %d, want %d", i+1, resp.StatusCode, status)
				}
			}
			if got, want := a.arrivals(), []time.Duration{0, 0}; !slices.Equal(got, want) {
				t.Errorf("arrivals %v, want %v", got, want)
			}
			if got := clock.Sleeps(); len(got) != 0 {
				t.Errorf("slept %v, want none", got)
			}
		})
	}
}
