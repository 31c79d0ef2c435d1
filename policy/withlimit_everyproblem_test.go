package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithLimitReportsEveryProblem: WithLimit judged the copy's Spec with
// Validate and kept the first problem alone (errors.As), so that a limit
// raised past MaxLimit on a bucket with a Burst of its own named the
// limit and not the burst scaled with it. Every problem is reported now,
// as New reports them, each an *Error naming the Spec's field; one
// problem reads word for word as before.
func TestWithLimitReportsEveryProblem(t *testing.T) {
	tb, err := policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1000, Window: time.Second, Burst: 2000}, keyfunc.Global())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.WithLimit(2_000_000_000)
	wantEvery(t, "WithLimit(2e9) of token_bucket 1000/1s burst 2000", err, []string{
		`policy: "tb": Spec.Limit must be at most 1000000000, got 2000000000`,
		`policy: "tb": Spec.Burst must be at most 1000000000, got 4000000000`})

	// One problem: the bare *Error, as before.
	_, err = tb.WithLimit(600_000_000)
	wantEvery(t, "WithLimit(6e8) of token_bucket 1000/1s burst 2000", err, []string{
		`policy: "tb": Spec.Burst must be at most 1000000000, got 1200000000`})
	if _, ok := err.(*policy.Error); !ok {
		t.Errorf("WithLimit(6e8): a %T, want the bare *policy.Error of its one problem", err)
	}
	q, err := policy.New("q", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Hour}, keyfunc.Global())
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.WithLimit(algorithms.MaxLimit)
	wantEvery(t, "WithLimit(1e9) of leaky_queue 10/1s max_delay 1h", err, []string{
		`policy: "q": Spec.MaxDelay 1h0m0s queues more than 1000000000 requests at 1000000000 per 1s`})
}
