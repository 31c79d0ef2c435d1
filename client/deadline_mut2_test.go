package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// lapsedCtx is a context whose deadline has passed but whose timer has not
// fired yet: Done is closed, and Err is context.DeadlineExceeded, only once
// fire is called. A real context is in that state for a moment after its
// deadline; here the test decides when the moment ends.
type lapsedCtx struct {
	context.Context
	dl   time.Time
	done chan struct{}
}

func newLapsedCtx() *lapsedCtx {
	return &lapsedCtx{Context: context.Background(), dl: time.Now(), done: make(chan struct{})}
}

func (c *lapsedCtx) Deadline() (time.Time, bool) { return c.dl, true }
func (c *lapsedCtx) Done() <-chan struct{}       { return c.done }
func (c *lapsedCtx) fire()                       { close(c.done) }

func (c *lapsedCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// A refusal that arrives once the request's deadline has passed is
// returned, not traded for ctx.Err(), whatever the retry's wait: "it gives
// up at once, without waiting, when the wait before the next attempt would
// end after the context's deadline" (RoundTrip's doc), and a wait of 0 ends
// then as surely as a wait of 1ns. The deadline passes during the first
// attempt; its 503 asks for Retry-After: 0 or 1, or has none and backs off
// for 0 (the jitter's lowest draw) or 1ns (its highest, with a ceiling of
// 1ns). Each time RoundTrip returns the 503 after one attempt, or with
// WithGiveUpError a *RetryError "retry would come after the context
// deadline". (Bug: a wait of 0 returned context.DeadlineExceeded and lost
// the server's answer, so that with a backoff the outcome hung on the
// random draw; transport.go:258's wait > 0 left the deadline unchecked for
// it.) Kills :258's wait > 1 too (the 1ns backoff then slept on an ended
// context and returned its error).
func TestRefusalAfterDeadlineReturned(t *testing.T) {
	for _, tc := range []struct {
		name string
		ra   string // "" for none
		src  interface{ Uint64() uint64 }
	}{
		{"Retry-After 0", "0", maxSource{}},
		{"Retry-After 1", "1", maxSource{}},
		{"backoff 0", "", zeroSource{}},
		{"backoff 1ns", "", maxSource{}},
	} {
		for _, giveUpError := range []bool{false, true} {
			ctx := newLapsedCtx()
			sent := 0
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent++
				ctx.fire() // the deadline's timer fires while the server answers
				h := http.Header{}
				if tc.ra != "" {
					h.Set("Retry-After", tc.ra)
				}
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h,
					Body: io.NopCloser(strings.NewReader("busy")), Request: r}, nil
			})
			opts := []client.Option{client.WithClock(newAutoClock()), client.WithRandom(tc.src),
				client.WithBackoff(time.Nanosecond, time.Nanosecond)}
			if giveUpError {
				opts = append(opts, client.WithGiveUpError())
			}
			tr, err := client.New(next, opts...)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
			resp, err := tr.RoundTrip(req)
			name := tc.name + ", giveUpError " + strconv.FormatBool(giveUpError)
			if sent != 1 {
				t.Errorf("%s: sent %d times, want 1", name, sent)
			}
			var re *client.RetryError
			switch {
			case !giveUpError && (err != nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable):
				t.Errorf("%s: got %v, %v; want the 503", name, resp, err)
			case giveUpError && (!errors.As(err, &re) || re.Attempts != 1 || re.Reason != "retry would come after the context deadline"):
				t.Errorf("%s: got %v, %v; want a *RetryError after 1 attempt for the deadline", name, resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}
	}
}
