package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestShorthandBucketsAndMaxDelay: the shorthands (Per, PerMinute...) could
// not make a sliding_buckets policy (Spec.Buckets was 0, an error with no
// option to set it) nor a leaky_queue that holds requests (MaxDelay 0: it
// refuses every request that would wait). WithBuckets and WithMaxDelay set
// them, and bad values fail at construction naming the field.
func TestShorthandBucketsAndMaxDelay(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP())
	p, err := policy.Per("b", 10, time.Minute, ip, policy.WithAlgorithm(algorithms.SlidingBuckets), policy.WithBuckets(6))
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Spec(); s.Algorithm != algorithms.SlidingBuckets || s.Buckets != 6 || s.Limit != 10 || s.Window != time.Minute {
		t.Errorf("sliding_buckets shorthand: Spec %v, want sliding_buckets 10 per 1m in 6 buckets", s)
	}

	for _, tc := range []struct {
		name  string
		opts  []policy.Option
		field string
	}{
		{"no buckets", []policy.Option{policy.WithAlgorithm(algorithms.SlidingBuckets)}, "Buckets"},
		{"buckets not dividing the window", []policy.Option{policy.WithAlgorithm(algorithms.SlidingBuckets), policy.WithBuckets(7)}, "Buckets"},
		{"negative max delay", []policy.Option{policy.WithAlgorithm(algorithms.LeakyQueue), policy.WithMaxDelay(-time.Second)}, "MaxDelay"},
	} {
		_, err := policy.Per("x", 10, time.Minute, ip, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("%s: error %v, want one naming policy \"x\" and %s", tc.name, err, tc.field)
		}
	}

	// A queue of 2 per second holding up to 1 s: the second request at
	// once waits 500 ms, the third 1 s, the fourth is refused. Without
	// WithMaxDelay the second is refused.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return at })))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, tc := range []struct {
		name  string
		opts  []policy.Option
		delay []time.Duration // -1: refused
	}{
		{"held", []policy.Option{policy.WithAlgorithm(algorithms.LeakyQueue), policy.WithMaxDelay(time.Second)}, []time.Duration{0, 500 * time.Millisecond, time.Second, -1}},
		{"unheld", []policy.Option{policy.WithAlgorithm(algorithms.LeakyQueue)}, []time.Duration{0, -1}},
	} {
		q, err := policy.Per("q-"+tc.name, 2, time.Second, ip, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range tc.delay {
			ds, err := store.Take(context.Background(), algorithms.Check{Spec: q.Spec(), Key: "k", Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := ds[0].Delay
			if !ds[0].Allowed {
				got = -1
			}
			if got != want {
				t.Errorf("%s: request %d: delay %v (allowed %v), want %v (-1: refused)", tc.name, i+1, ds[0].Delay, ds[0].Allowed, want)
			}
		}
	}
}
