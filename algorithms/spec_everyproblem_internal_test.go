package algorithms

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// TestSpecValidateFirstProblemAsBefore: Validate reports every problem of
// a Spec; its first (errors.As), and a single problem word for word, is
// the one Validate reported when it stopped at the first. Over every
// combination of values at and around each bound (and the extremes a
// wrap-round could hide), Validate is nil exactly when the old one was,
// and its first problem is the old one's error.
func TestSpecValidateFirstProblemAsBefore(t *testing.T) {
	kinds := append(Kinds[:], "", "gcra")
	limits := []int64{math.MinInt64, 0, 1, 7, MaxLimit, MaxLimit + 1, math.MaxInt64}
	windows := []time.Duration{math.MinInt64, 0, 1, MinWindow - 1, MinWindow, time.Second, 7 * time.Second, MaxWindow, MaxWindow + 1, math.MaxInt64}
	bursts := []int64{math.MinInt64, -1, 0, 1, 100_000, MaxLimit, MaxLimit + 1}
	buckets := []int{math.MinInt, -1, 0, 1, 7, MaxBuckets, MaxBuckets + 1, math.MaxInt}
	delays := []time.Duration{math.MinInt64, -1, 0, time.Second, MaxWindow, MaxWindow + 1}
	n, several := 0, 0
	for _, k := range kinds {
		for _, l := range limits {
			for _, w := range windows {
				for _, b := range bursts {
					for _, bk := range buckets {
						for _, d := range delays {
							s := Spec{Algorithm: k, Limit: l, Window: w, Burst: b, Buckets: bk, MaxDelay: d}
							err, want := s.Validate(), firstSpecProblem(s)
							n++
							if want == nil {
								if err != nil {
									t.Fatalf("%v: Validate() = %v, want nil", s, err)
								}
								continue
							}
							var first *SpecError
							if !errors.As(err, &first) || first.Error() != want.Error() || first.Spec != s {
								t.Fatalf("%v: Validate() = %v, want its first problem to be %v", s, err, want)
							}
							if _, ok := err.(*SpecError); !ok {
								several++
								for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
									if se, ok := e.(*SpecError); !ok || se.Spec != s {
										t.Fatalf("%v: Validate() holds %v (%T), want a *SpecError of the Spec", s, e, e)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d specs, %d with several problems", n, several)
}

// firstSpecProblem is Validate as it was when it reported the first
// problem only (a copy of its code then), the model the test above
// compares Validate with.
func firstSpecProblem(s Spec) error {
	bad := func(field, format string, args ...any) error {
		return &SpecError{Spec: s, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if s.Algorithm == "" {
		return bad("Algorithm", "is empty; want one of %s", kindList)
	}
	if !s.Algorithm.Valid() {
		return bad("Algorithm", "unknown kind %q; want one of %s", string(s.Algorithm), kindList)
	}
	if s.Limit < 1 {
		return bad("Limit", "must be positive, got %d", s.Limit)
	}
	if s.Limit > MaxLimit {
		return bad("Limit", "must be at most %d, got %d", MaxLimit, s.Limit)
	}
	if s.Window < MinWindow {
		if s.Window <= 0 {
			return bad("Window", "must be positive, got %s", s.Window)
		}
		return bad("Window", "must be at least %s, got %s", MinWindow, s.Window)
	}
	if s.Window > MaxWindow {
		return bad("Window", "must be at most %s, got %s", MaxWindow, s.Window)
	}
	switch s.Algorithm {
	case TokenBucket, LeakyBucket:
		if s.Burst < 0 {
			return bad("Burst", "must be at least 1 (or 0 for Limit), got %d", s.Burst)
		}
		if s.Burst > MaxLimit {
			return bad("Burst", "must be at most %d, got %d", MaxLimit, s.Burst)
		}
		// Refilling a whole bucket takes Burst·Window/Limit.
		if mulDivCeil(s.burst(), int64(s.Window), s.Limit) > int64(MaxWindow) {
			return bad("Burst", "%d takes longer than %s to refill at %d per %s", s.burst(), MaxWindow, s.Limit, s.Window)
		}
	default:
		if s.Burst != 0 {
			return bad("Burst", "applies only to %s and %s, not %s", TokenBucket, LeakyBucket, s.Algorithm)
		}
	}
	if s.Algorithm == SlidingBuckets {
		if s.Buckets < 1 {
			return bad("Buckets", "must be at least 1 for %s, got %d", SlidingBuckets, s.Buckets)
		}
		if s.Buckets > MaxBuckets {
			return bad("Buckets", "must be at most %d, got %d", MaxBuckets, s.Buckets)
		}
		if int64(s.Window)%int64(s.Buckets) != 0 {
			return bad("Buckets", "%d does not divide Window %s (%d ns) exactly", s.Buckets, s.Window, int64(s.Window))
		}
	} else if s.Buckets != 0 {
		return bad("Buckets", "applies only to %s, not %s", SlidingBuckets, s.Algorithm)
	}
	if s.Algorithm == LeakyQueue {
		if s.MaxDelay < 0 {
			return bad("MaxDelay", "must not be negative, got %s", s.MaxDelay)
		}
		if s.MaxDelay > MaxWindow {
			return bad("MaxDelay", "must be at most %s, got %s", MaxWindow, s.MaxDelay)
		}
		if mulDivFloor(int64(s.MaxDelay), s.Limit, int64(s.Window)) >= MaxLimit {
			return bad("MaxDelay", "%s queues more than %d requests at %d per %s", s.MaxDelay, MaxLimit, s.Limit, s.Window)
		}
	} else if s.MaxDelay != 0 {
		return bad("MaxDelay", "applies only to %s, not %s", LeakyQueue, s.Algorithm)
	}
	return nil
}
