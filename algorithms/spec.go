package algorithms

import (
	"fmt"
	"time"
)

// A Kind names a rate-limiting algorithm. The zero Kind is invalid.
type Kind string

// The algorithms. Their exact semantics are in the package documentation.
const (
	// FixedWindow counts requests in windows aligned to the Unix epoch.
	FixedWindow Kind = "fixed_window"
	// SlidingLog keeps the timestamp of every accepted request.
	SlidingLog Kind = "sliding_log"
	// SlidingWindow is the two-counter weighted estimate (Cloudflare's counter).
	SlidingWindow Kind = "sliding_window"
	// SlidingBuckets sums Buckets sub-window counts.
	SlidingBuckets Kind = "sliding_buckets"
	// TokenBucket refills Limit tokens per Window up to Burst, starting full.
	TokenBucket Kind = "token_bucket"
	// LeakyBucket is the meter: a bucket that leaks Limit per Window and rejects when full.
	LeakyBucket Kind = "leaky_bucket"
	// LeakyQueue is the shaper: it accepts with a Delay, releasing Limit per Window.
	LeakyQueue Kind = "leaky_queue"
)

// Kinds lists every Kind, in a fixed order. Validation does not read it.
var Kinds = [...]Kind{FixedWindow, SlidingLog, SlidingWindow, SlidingBuckets, TokenBucket, LeakyBucket, LeakyQueue}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	switch k {
	case FixedWindow, SlidingLog, SlidingWindow, SlidingBuckets, TokenBucket, LeakyBucket, LeakyQueue:
		return true
	}
	return false
}

// Bounds on a Spec. They keep every computation exact in 64-bit integers
// (with 128-bit intermediate products) and in the Redis store's Lua.
const (
	// MaxLimit is the largest Limit, Burst and queue capacity.
	MaxLimit = 1_000_000_000
	// MinWindow is the shortest Window.
	MinWindow = time.Millisecond
	// MaxWindow is the longest Window, MaxDelay and time to refill a bucket.
	MaxWindow = 24 * time.Hour
	// MaxBuckets is the largest number of sub-windows of a sliding_buckets Spec.
	MaxBuckets = 3600
)

// A Spec describes one limit: Limit units per Window under an algorithm.
// It is plain, comparable data, so it can be loaded from configuration and
// used as a map key; call [Spec.Validate] before use (the stores do).
type Spec struct {
	// Algorithm is the algorithm that decides; the zero Kind is invalid.
	Algorithm Kind
	// Limit is the number of units allowed per Window (for the buckets, the
	// refill or leak rate per Window).
	Limit int64
	// Window is the length of the window (for the buckets, the period of the rate).
	Window time.Duration
	// Burst is the capacity of token_bucket and leaky_bucket; 0 means Limit.
	// It must be 0 for the other kinds.
	Burst int64
	// Buckets is the number of sub-windows of sliding_buckets; it must divide
	// Window exactly. It must be 0 for the other kinds.
	Buckets int
	// MaxDelay is the longest a leaky_queue holds a request; 0 admits only a
	// request that can leave at once. It must be 0 for the other kinds.
	MaxDelay time.Duration
}

// Capacity returns the largest cost a single request may have under s, which
// is also the largest Remaining a Decision reports: Burst (or Limit) for the
// buckets, the queue length floor(MaxDelay·Limit/Window)+1 for leaky_queue,
// and Limit otherwise. It assumes s is valid.
func (s Spec) Capacity() int64 {
	switch s.Algorithm {
	case TokenBucket, LeakyBucket:
		return s.burst()
	case LeakyQueue:
		return mulDivFloor(int64(s.MaxDelay), s.Limit, int64(s.Window)) + 1
	}
	return s.Limit
}

func (s Spec) burst() int64 {
	if s.Burst == 0 {
		return s.Limit
	}
	return s.Burst
}

// String formats s compactly, for logs and error messages.
func (s Spec) String() string {
	str := fmt.Sprintf("%s %d/%s", s.Algorithm, s.Limit, s.Window)
	if s.Burst != 0 {
		str += fmt.Sprintf(" burst=%d", s.Burst)
	}
	if s.Buckets != 0 {
		str += fmt.Sprintf(" buckets=%d", s.Buckets)
	}
	if s.MaxDelay != 0 {
		str += fmt.Sprintf(" max_delay=%s", s.MaxDelay)
	}
	return str
}

// Validate reports the first problem with s as a *SpecError that names the
// field and the rule, or nil when s is valid.
func (s Spec) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &SpecError{Spec: s, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if s.Algorithm == "" {
		return bad("Algorithm", "is empty; want one of %v", Kinds)
	}
	if !s.Algorithm.Valid() {
		return bad("Algorithm", "unknown kind %q; want one of %v", string(s.Algorithm), Kinds)
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
