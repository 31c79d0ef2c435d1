package algorithms_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

func TestSpecValidate(t *testing.T) {
	ok := func(s algorithms.Spec) algorithms.Spec { return s }
	base := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}
	with := func(f func(*algorithms.Spec)) algorithms.Spec { s := base; f(&s); return s }
	tests := []struct {
		name  string
		spec  algorithms.Spec
		field string // "" when valid
		rule  string // a fragment of the reason
	}{
		// Valid specs of every kind.
		{"fixed window", base, "", ""},
		{"sliding log", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingLog }), "", ""},
		{"sliding window", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingWindow }), "", ""},
		{"sliding buckets", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingBuckets; s.Buckets = 10 }), "", ""},
		{"token bucket default burst", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.TokenBucket }), "", ""},
		{"token bucket burst", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.TokenBucket; s.Burst = 50 }), "", ""},
		{"leaky bucket", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.LeakyBucket; s.Burst = 1 }), "", ""},
		{"leaky queue no delay", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.LeakyQueue }), "", ""},
		{"leaky queue", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.LeakyQueue; s.MaxDelay = time.Second }), "", ""},
		{"largest", ok(algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow}), "", ""},
		// Valid at each bound, each the largest (or smallest) a rule allows.
		{"shortest window", with(func(s *algorithms.Spec) { s.Window = algorithms.MinWindow }), "", ""},
		{"burst at MaxLimit", ok(algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: time.Second, Burst: algorithms.MaxLimit}), "", ""},
		{"burst refilled in exactly MaxWindow", ok(algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: time.Hour, Burst: 24}), "", ""},
		{"MaxBuckets", ok(algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Hour, Buckets: algorithms.MaxBuckets}), "", ""},
		{"max delay MaxWindow", ok(algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: algorithms.MaxWindow, MaxDelay: algorithms.MaxWindow}), "", ""},
		// floor(MaxDelay·L/W) = MaxLimit−1: a queue of MaxLimit.
		{"longest queue", ok(algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow, MaxDelay: algorithms.MaxWindow - 86400}), "", ""},
		{"queue one too long", ok(algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow, MaxDelay: algorithms.MaxWindow}), "MaxDelay", "queues more than"},

		// Algorithm.
		{"empty kind", with(func(s *algorithms.Spec) { s.Algorithm = "" }), "Algorithm", "is empty"},
		{"unknown kind", with(func(s *algorithms.Spec) { s.Algorithm = "gcra" }), "Algorithm", `unknown kind "gcra"`},
		// Limit.
		{"zero limit", with(func(s *algorithms.Spec) { s.Limit = 0 }), "Limit", "must be positive"},
		{"negative limit", with(func(s *algorithms.Spec) { s.Limit = -5 }), "Limit", "must be positive"},
		{"limit too large", with(func(s *algorithms.Spec) { s.Limit = algorithms.MaxLimit + 1 }), "Limit", "at most"},
		// Window.
		{"zero window", with(func(s *algorithms.Spec) { s.Window = 0 }), "Window", "must be positive"},
		{"negative window", with(func(s *algorithms.Spec) { s.Window = -time.Second }), "Window", "must be positive"},
		{"window too short", with(func(s *algorithms.Spec) { s.Window = time.Microsecond }), "Window", "at least 1ms"},
		{"window too long", with(func(s *algorithms.Spec) { s.Window = 25 * time.Hour }), "Window", "at most 24h0m0s"},
		// Burst.
		{"burst below 1", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.TokenBucket; s.Burst = -1 }), "Burst", "at least 1"},
		{"burst too large", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.TokenBucket; s.Burst = algorithms.MaxLimit + 1 }), "Burst", "at most"},
		{"burst refills too slowly", with(func(s *algorithms.Spec) {
			s.Algorithm = algorithms.LeakyBucket
			s.Limit = 1
			s.Window = time.Hour
			s.Burst = 25
		}), "Burst", "to refill"},
		{"burst on fixed window", with(func(s *algorithms.Spec) { s.Burst = 5 }), "Burst", "applies only to"},
		// Buckets.
		{"no buckets", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingBuckets }), "Buckets", "at least 1"},
		{"buckets do not divide", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingBuckets; s.Buckets = 7 }), "Buckets", "does not divide"},
		{"too many buckets", with(func(s *algorithms.Spec) {
			s.Algorithm = algorithms.SlidingBuckets
			s.Window = time.Hour
			s.Buckets = 7200
		}), "Buckets", "at most"},
		{"buckets on token bucket", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.TokenBucket; s.Buckets = 2 }), "Buckets", "applies only to"},
		// MaxDelay.
		{"negative delay", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.LeakyQueue; s.MaxDelay = -1 }), "MaxDelay", "not be negative"},
		{"delay too long", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.LeakyQueue; s.MaxDelay = 25 * time.Hour }), "MaxDelay", "at most"},
		{"queue too long", with(func(s *algorithms.Spec) {
			s.Algorithm = algorithms.LeakyQueue
			s.Limit = algorithms.MaxLimit
			s.MaxDelay = 2 * time.Second
		}), "MaxDelay", "queues more than"},
		{"delay on sliding window", with(func(s *algorithms.Spec) { s.Algorithm = algorithms.SlidingWindow; s.MaxDelay = time.Second }), "MaxDelay", "applies only to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate(%v) = %v, want nil", tt.spec, err)
				}
				return
			}
			var se *algorithms.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Validate(%v) = %v, want a *SpecError", tt.spec, err)
			}
			if !errors.Is(err, algorithms.ErrInvalidSpec) {
				t.Errorf("errors.Is(%v, ErrInvalidSpec) = false", err)
			}
			if se.Field != tt.field {
				t.Errorf("Validate(%v).Field = %q, want %q", tt.spec, se.Field, tt.field)
			}
			if !strings.Contains(err.Error(), tt.rule) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Validate(%v) = %q, want it to name %q and say %q", tt.spec, err, tt.field, tt.rule)
			}
		})
	}
}

func TestSpecCapacity(t *testing.T) {
	tests := []struct {
		spec algorithms.Spec
		want int64
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 7, Window: time.Second}, 7},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 7, Window: time.Second}, 7},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 7, Window: time.Second, Burst: 3}, 3},
		{algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 7, Window: time.Second, Burst: 20}, 20},
		// The queue admits at one instant the requests whose delay k·W/L <= MaxDelay.
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second}, 1},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: time.Second}, 6},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: 999 * time.Millisecond}, 3},
	}
	for _, tt := range tests {
		if got := tt.spec.Capacity(); got != tt.want {
			t.Errorf("%v.Capacity() = %d, want %d", tt.spec, got, tt.want)
		}
	}
}

// TestSpecString: String names the kind and the rate, and each of Burst,
// Buckets and MaxDelay only when it is set.
func TestSpecString(t *testing.T) {
	tests := []struct {
		spec algorithms.Spec
		want string
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}, "fixed_window 10/1s"},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, Burst: 20}, "token_bucket 5/1s burst=20"},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}, "sliding_buckets 10/1m0s buckets=6"},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 300 * time.Millisecond}, "leaky_queue 10/1s max_delay=300ms"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestCheckValidate(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	for _, tt := range []struct {
		cost    int64
		wantErr bool
	}{{0, false}, {1, false}, {5, false}, {6, true}, {-1, true}} {
		err := algorithms.Check{Spec: spec, Key: "k", Cost: tt.cost}.Validate()
		if (err != nil) != tt.wantErr {
			t.Errorf("Check{Cost: %d}.Validate() = %v, want error %v", tt.cost, err, tt.wantErr)
		}
		if err != nil && !errors.Is(err, algorithms.ErrInvalidCost) {
			t.Errorf("Check{Cost: %d}.Validate() = %v, want ErrInvalidCost", tt.cost, err)
		}
	}
}
