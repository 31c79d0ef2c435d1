package client_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A refusal whose rate-limit fields say that no quota is left until 2s,
// with no Retry-After, holds the requests the pacer has queued as a
// Retry-After does (see TestRetryAfterHoldsQueuedCallers), whatever form
// the fields take: the server refused a request and said when quota comes
// back, the refused request's retry waits for that, and a queued request
// sent before then would only earn a refusal too. At 5 per second, five
// callers queue behind the first (turns at 200ms to 1s); the refusal,
// answered once all five sleep for their turns, holds the key until 2s.
// Their turns fall in the hold: they take new ones, in order, from 2s, the
// refused caller's retry after them, and the stub sees nothing during the
// hold. (They were sent at their turns, from 200ms, into the server's
// hold.) The same fields on a success are a hint: the queued requests keep
// their turns, as WithProactive's doc says (a hint is in whole seconds,
// often longer than the server needs; a client paced at the server's rate
// meets r=0 on every response, and would go at one request per t).
func TestRefusalFieldsHoldQueuedCallers(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, v := range n {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	held := ms(0, 2000, 2200, 2400, 2600, 2800, 3000)
	kept := ms(0, 200, 400, 600, 800, 1000)
	reset := strconv.FormatInt(t0.Add(2*time.Second).Unix(), 10)
	for _, tc := range []struct {
		name   string
		status int
		kv     []string
		want   []time.Duration
	}{
		{"RateLimit on a 429", 429, []string{"RateLimit", `"default";r=0;t=2`}, held},
		{"RateLimit-Policy's w on a 429", 429, []string{"RateLimit", `"min";r=0`, "RateLimit-Policy", `"min";q=5;w=2`}, held},
		{"draft-7 on a 429", 429, []string{"RateLimit", `limit=5, remaining=0, reset=2`}, held},
		{"draft-6 on a 503", 503, []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "2"}, held},
		{"X-RateLimit on a 403", 403, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset}, held},
		{"mixed drafts on a 429, two lines", 429, []string{"RateLimit", `"default";r=1;t=1`, "RateLimit", `limit=5, remaining=0, reset=2`}, held},
		{"mixed drafts on a 429, one line", 429, []string{"RateLimit", `limit=5, remaining=0, reset=2, "default";r=1;t=1`}, held},
		{"a Retry-After of 0 and RateLimit on a 429", 429, []string{"Retry-After", "0", "RateLimit", `"default";r=0;t=2`}, held},
		{"RateLimit on a 200: a hint", 200, []string{"RateLimit", `"default";r=0;t=2`}, kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					// Answer once the five other callers have taken their
					// turns (and sleep in the clock), so that the hold
					// meets them queued.
					awaitSleepers(t, clock, 5, "the five other callers waiting for their turns")
					for i := 0; i < len(tc.kv); i += 2 {
						w.Header().Add(tc.kv[i], tc.kv[i+1])
					}
					w.WriteHeader(tc.status)
					return
				}
				io.WriteString(w, "ok")
			})
			hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second), client.WithRandom(zeroSource{}))
			statuses := make([]int, 6)
			clock.drive(t, 6, func(i int) {
				status, _, err := get(hc, srv.URL)
				if err != nil {
					t.Errorf("caller %d: %v", i, err)
				}
				statuses[i] = status
			})
			if at := srv.arrivals(); !slices.Equal(at, tc.want) {
				t.Errorf("arrivals %v, want %v", at, tc.want)
			}
			for i, s := range statuses {
				if s != 200 {
					t.Errorf("caller %d: status %d, want 200", i, s)
				}
			}
		})
	}
}
