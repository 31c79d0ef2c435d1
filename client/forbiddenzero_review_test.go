package client_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A 403 is a refusal for rate when its fields say so: rate-limit fields
// announcing a reset still to come, or a Retry-After asking for a wait. A
// Retry-After that asks for none ("0", as some servers put on every
// response, or an HTTP-date already past) says nothing of a rate, as
// fields whose reset has passed say nothing: such a 403 (a bad token, a
// forbidden resource) is the server's answer, returned at once, not sent
// again DefaultRetries times after backoffs and then, with
// WithGiveUpError, turned into a *RetryError.
func TestForbiddenWithZeroRetryAfterIsTheAnswer(t *testing.T) {
	for name, ra := range map[string]func(now time.Time) string{
		"0":         func(time.Time) string { return "0" },
		"date past": func(now time.Time) string { return now.Add(-time.Minute).UTC().Format(http.TimeFormat) },
		"ms 0":      nil,
	} {
		for _, giveUpError := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, giveUpError %v", name, giveUpError), func(t *testing.T) {
				clock := newAutoClock()
				srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
					if ra == nil {
						w.Header().Set("retry-after-ms", "0")
					} else {
						w.Header().Set("Retry-After", ra(clock.Now()))
					}
					w.WriteHeader(http.StatusForbidden)
					io.WriteString(w, "forbidden")
				})
				var opts []client.Option
				if giveUpError {
					opts = append(opts, client.WithGiveUpError())
				}
				hc, _ := newClient(t, clock, opts...)
				status, body, err := get(hc, srv.URL)
				if err != nil || status != http.StatusForbidden || body != "forbidden" {
					t.Errorf("got %d %q %v, want the 403 \"forbidden\"", status, body, err)
				}
				if at := srv.arrivals(); len(at) != 1 {
					t.Errorf("%d attempts (%v), want 1", len(at), at)
				}
			})
		}
	}
}
