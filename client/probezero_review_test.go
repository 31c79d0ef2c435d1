package client_test

import (
	"net/http"
	"testing"
	"time"
)

// A probe refused with a Retry-After that asks for no wait ("0", or an
// HTTP-date already past: a server whose clock lags, or an answer slow to
// arrive) learns no more than one refused without a Retry-After: such a
// Retry-After is no usable one (the retry gets the backoff, see
// WithBackoff). So, as for a refusal that says nothing of how long, the
// probe keeps its role through its retry and the others wait on; before,
// the cut was lifted at that refusal, and the requests waiting for the
// probe all went at once, into more refusals.
func TestProbeRefusedWithAZeroRetryAfterKeepsItsRole(t *testing.T) {
	for name, ra := range map[string]func(now time.Time) string{
		"0":         func(time.Time) string { return "0" },
		"date past": func(now time.Time) string { return now.Add(-time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			probeKeepsItsRole(t, http.StatusTooManyRequests, func(w http.ResponseWriter, now time.Time) {
				w.Header().Set("Retry-After", ra(now))
				w.WriteHeader(http.StatusTooManyRequests)
			})
		})
	}
}
