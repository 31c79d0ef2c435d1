package client_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// TestNewQueueTooLongOneProblem: New judges its queue with
// algorithms.Spec.Validate, which joins every problem of a Spec; each
// field it is built from is judged by its option first (WithRate's limit
// and per, WithMaxWait's bound), so the only problem left is the queue's
// length, named by the option that sets it, on one line.
func TestNewQueueTooLongOneProblem(t *testing.T) {
	_, err := client.New(nil, client.WithRate(algorithms.MaxLimit, time.Millisecond), client.WithMaxWait(time.Hour))
	want := "client: WithMaxWait: 1h0m0s queues more than 1000000000 requests at 1000000000 per 1ms"
	if err == nil || err.Error() != want || strings.Contains(err.Error(), "\n") {
		t.Errorf("New(WithRate(1e9, 1ms), WithMaxWait(1h)) = %v, want %q", err, want)
	}
}
