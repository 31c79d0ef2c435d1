package algorithms_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestSpecValidateReportsEveryProblem: Validate stopped at the first bad
// field, so a Spec with several took one run per field to fix. Every
// problem that does not depend on another one reported is now reported,
// one per line, in the order Validate judges the fields (Algorithm,
// Limit, Window, Burst, Buckets, MaxDelay); each is a *SpecError, and
// errors.As gives the first, the one reported before. A value judged
// against another one is not judged when that one is refused: nothing
// kind-specific (Burst, Buckets, MaxDelay, even set where they do not
// apply) against an unknown or empty Algorithm, a burst's refill time or
// a queue's length against a refused Limit or Window, buckets dividing a
// refused Window.
func TestSpecValidateReportsEveryProblem(t *testing.T) {
	const p = "algorithms: invalid spec: "
	tests := []struct {
		name string
		spec algorithms.Spec
		want []string
	}{
		{"limit and window", algorithms.Spec{Algorithm: algorithms.FixedWindow}, []string{
			p + "Limit must be positive, got 0",
			p + "Window must be positive, got 0s"}},
		{"unknown kind, limit and window, nothing kind-specific", algorithms.Spec{Algorithm: "gcra", Burst: 3, Buckets: 2, MaxDelay: time.Second}, []string{
			p + `Algorithm unknown kind "gcra"; want one of fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue`,
			p + "Limit must be positive, got 0",
			p + "Window must be positive, got 0s"}},
		{"empty kind and limit", algorithms.Spec{Limit: -1, Window: time.Second, Burst: -1}, []string{
			p + "Algorithm is empty; want one of fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue",
			p + "Limit must be positive, got -1"}},
		{"limit, window and burst out of range", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2_000_000_000, Window: 48 * time.Hour, Burst: -1}, []string{
			p + "Limit must be at most 1000000000, got 2000000000",
			p + "Window must be at most 24h0m0s, got 48h0m0s",
			p + "Burst must be at least 1 (or 0 for Limit), got -1"}},
		{"window and burst too large", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: time.Microsecond, Burst: algorithms.MaxLimit + 1}, []string{
			p + "Window must be at least 1ms, got 1µs",
			p + "Burst must be at most 1000000000, got 1000000001"}},
		{"burst, buckets and max delay of another kind", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second, Burst: 5, Buckets: 2, MaxDelay: time.Second}, []string{
			p + "Burst applies only to token_bucket and leaky_bucket, not fixed_window",
			p + "Buckets applies only to sliding_buckets, not fixed_window",
			p + "MaxDelay applies only to leaky_queue, not fixed_window"}},
		{"burst that refills too slowly and a max delay", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: time.Hour, Burst: 25, MaxDelay: time.Second}, []string{
			p + "Burst 25 takes longer than 24h0m0s to refill at 1 per 1h0m0s",
			p + "MaxDelay applies only to leaky_queue, not leaky_bucket"}},
		{"limit, buckets and max delay of a queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Window: time.Second, Buckets: 3, MaxDelay: -time.Second}, []string{
			p + "Limit must be positive, got 0",
			p + "Buckets applies only to sliding_buckets, not leaky_queue",
			p + "MaxDelay must not be negative, got -1s"}},
		{"window and max delay too long", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit, MaxDelay: 25 * time.Hour}, []string{
			p + "Window must be positive, got 0s",
			p + "MaxDelay must be at most 24h0m0s, got 25h0m0s"}},
		// Buckets and Window each valid: whether one divides the other is
		// no matter of the Limit.
		{"limit and buckets that do not divide the window", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Window: time.Second, Buckets: 7}, []string{
			p + "Limit must be positive, got 0",
			p + "Buckets 7 does not divide Window 1s (1000000000 ns) exactly"}},
		{"limit and too many buckets", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit + 1, Window: time.Hour, Buckets: 7200}, []string{
			p + "Limit must be at most 1000000000, got 1000000001",
			p + "Buckets must be at most 3600, got 7200"}},
		{"limit and no buckets", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Window: time.Minute}, []string{
			p + "Limit must be positive, got 0",
			p + "Buckets must be at least 1 for sliding_buckets, got 0"}},

		// A single problem is the bare *SpecError, as before: no knock-on
		// problem of a value judged against a refused one.
		{"limit refused, a burst that refills in time at any valid limit", algorithms.Spec{Algorithm: algorithms.TokenBucket, Window: 24 * time.Hour, Burst: 100_000}, []string{
			p + "Limit must be positive, got 0"}},
		{"window refused, a burst that would refill too slowly", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 25 * time.Hour, Burst: 2}, []string{
			p + "Window must be at most 24h0m0s, got 25h0m0s"}},
		{"window refused, buckets that divide no valid window", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Buckets: 7}, []string{
			p + "Window must be positive, got 0s"}},
		{"limit refused, a queue that would be too long", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit + 1, Window: time.Second, MaxDelay: 2 * time.Second}, []string{
			p + "Limit must be at most 1000000000, got 1000000001"}},
		{"window refused, a queue that would be too long", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit, Window: time.Nanosecond, MaxDelay: 24 * time.Hour}, []string{
			p + "Window must be at least 1ms, got 1ns"}},
		{"unknown kind alone", algorithms.Spec{Algorithm: "Token_Bucket", Limit: 1, Window: time.Second, Burst: 1}, []string{
			p + `Algorithm unknown kind "Token_Bucket"; want one of fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			wantSpecErrors(t, "Validate", tt.spec, err, tt.want)
			// The same through the constructors and a store's Take.
			mem, err := algorithms.NewMemoryStore()
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			_, err = algorithms.NewLimiter(mem, tt.spec)
			wantSpecErrors(t, "NewLimiter", tt.spec, err, tt.want)
			_, err = mem.Take(context.Background(), algorithms.Check{Spec: tt.spec, Key: "k"})
			wantSpecErrors(t, "MemoryStore.Take", tt.spec, err, tt.want)
		})
	}
}

// wantSpecErrors checks that err, what returned for spec, is the problems
// want, one per line: a single one the bare *SpecError, several joined,
// each a *SpecError of spec, errors.As giving the first.
func wantSpecErrors(t *testing.T, what string, spec algorithms.Spec, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s(%v) = nil, want %q", what, spec, want)
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("%s(%v) = %q, want %q", what, spec, got, strings.Join(want, "\n"))
	}
	if !errors.Is(err, algorithms.ErrInvalidSpec) {
		t.Errorf("%s(%v): errors.Is(ErrInvalidSpec) = false", what, spec)
	}
	var first *algorithms.SpecError
	if !errors.As(err, &first) {
		t.Fatalf("%s(%v) = %v (%T), want a *SpecError", what, spec, err, err)
	}
	if first.Error() != want[0] || first.Spec != spec {
		t.Errorf("%s(%v): errors.As gives %q of %v, want %q of the Spec", what, spec, first, first.Spec, want[0])
	}
	errs := []error{err}
	if len(want) == 1 {
		if _, ok := err.(*algorithms.SpecError); !ok {
			t.Errorf("%s(%v) is a %T, want the bare *SpecError", what, spec, err)
		}
	} else if j, ok := err.(interface{ Unwrap() []error }); !ok {
		t.Errorf("%s(%v) is a %T, want the problems joined", what, spec, err)
	} else {
		errs = j.Unwrap()
	}
	for i, e := range errs {
		se, ok := e.(*algorithms.SpecError)
		if !ok || se.Spec != spec || !strings.HasPrefix(want[min(i, len(want)-1)], "algorithms: invalid spec: "+se.Field+" ") {
			t.Errorf("%s(%v): problem %d is %v (%T), want a *SpecError of the Spec naming its field", what, spec, i, e, e)
		}
	}
}

// TestSpecValidateValidNoAllocation: a store may validate a Spec on every
// Take (the Redis store does, through ValidateChecks): reporting every
// problem costs nothing on a valid Spec, of any kind.
func TestSpecValidateValidNoAllocation(t *testing.T) {
	for _, s := range validSpecs {
		var err error
		if n := testing.AllocsPerRun(100, func() { err = s.Validate() }); n != 0 || err != nil {
			t.Errorf("Validate(%v) = %v with %v allocations, want nil with none", s, err, n)
		}
	}
}

// validSpecs holds a valid Spec of each kind, each with the field its
// kind alone has.
var validSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute, Burst: 20},
	{Algorithm: algorithms.LeakyBucket, Limit: 100, Window: time.Minute, Burst: 20},
	{Algorithm: algorithms.LeakyQueue, Limit: 100, Window: time.Minute, MaxDelay: time.Second},
}

// BenchmarkSpecValidate measures Validate of a valid Spec of each kind,
// the work a store that validates every Take does per check.
func BenchmarkSpecValidate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for i := range validSpecs {
			if validSpecs[i].Validate() != nil {
				b.Fatal("invalid")
			}
		}
	}
}

// Validation reports every problem of a Spec, one per line, in the order
// of its fields; errors.As gives the first.
func ExampleSpec_Validate_everyProblem() {
	err := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 0, Window: 48 * time.Hour, Burst: -1}.Validate()
	fmt.Println(err)
	var se *algorithms.SpecError
	if errors.As(err, &se) {
		fmt.Println("first:", se.Field)
	}
	// Output:
	// algorithms: invalid spec: Limit must be positive, got 0
	// algorithms: invalid spec: Window must be at most 24h0m0s, got 48h0m0s
	// algorithms: invalid spec: Burst must be at least 1 (or 0 for Limit), got -1
	// first: Limit
}
