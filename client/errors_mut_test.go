package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A WaitError matches ErrWaitTooLong, and context.DeadlineExceeded only
// when the wait would have outlasted the context's deadline (Deadline), as
// its Is and Timeout say; it matches no other error. A RetryError matches
// ErrGaveUp and, through Err, what its WaitError matches.
func TestErrorsMatch(t *testing.T) {
	queue := &client.WaitError{Key: "api", Wait: 3 * time.Second, MaxWait: time.Second}
	deadline := &client.WaitError{Key: "api", Wait: 3 * time.Second, MaxWait: time.Minute, Deadline: true}
	gaveUp := &client.RetryError{Attempts: 2, LastStatus: 429, Reason: "retry would come after the context deadline", Err: deadline}
	for _, tc := range []struct {
		name                            string
		err                             error
		tooLong, deadlineExceeded, gave bool
		timeout                         bool
	}{
		{"queue", queue, true, false, false, false},
		{"deadline", deadline, true, true, false, true},
		{"gave up", gaveUp, true, true, true, false},
		{"gave up, no Err", &client.RetryError{Attempts: 4, LastStatus: 503, Reason: "retries exhausted"}, false, false, true, false},
	} {
		if got := errors.Is(tc.err, client.ErrWaitTooLong); got != tc.tooLong {
			t.Errorf("%s: Is(ErrWaitTooLong) = %v", tc.name, got)
		}
		if got := errors.Is(tc.err, context.DeadlineExceeded); got != tc.deadlineExceeded {
			t.Errorf("%s: Is(context.DeadlineExceeded) = %v", tc.name, got)
		}
		if got := errors.Is(tc.err, client.ErrGaveUp); got != tc.gave {
			t.Errorf("%s: Is(ErrGaveUp) = %v", tc.name, got)
		}
		if errors.Is(tc.err, context.Canceled) {
			t.Errorf("%s: matches context.Canceled", tc.name)
		}
		if we, ok := tc.err.(*client.WaitError); ok && we.Timeout() != tc.timeout {
			t.Errorf("%s: Timeout() = %v", tc.name, we.Timeout())
		}
	}
}
