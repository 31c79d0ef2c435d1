package algorithms

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
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

// kindList is Kinds as the errors of an unknown kind list them.
const kindList = "fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue"

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

// Validate reports the problems of s, or nil when s is valid. Each is a
// *SpecError that names the field and the rule, and each is matched by
// errors.Is(err, [ErrInvalidSpec]). A single problem is returned as the
// *SpecError itself; several are joined ([errors.Join]), one per line, in
// the order of the fields (Algorithm, Limit, Window, Burst, Buckets,
// MaxDelay), and errors.As finds the first.
//
// Every problem that does not depend on another one is reported. A value
// judged against another one is not judged when that one is refused:
// nothing that depends on the kind (Burst, Buckets and MaxDelay, whether
// they apply at all) when Algorithm is not a known kind, neither the time
// a Burst takes to refill nor the length of a leaky_queue's queue when
// Limit or Window is refused, and not whether Buckets divide Window when
// Window is refused.
func (s Spec) Validate() error {
	// The rules s breaks, with no error built: judging a valid Spec costs
	// the comparisons only, and its kind is compared once.
	var p specProblem
	var bucket, buckets, queue bool // the kinds with Burst, Buckets, MaxDelay
	switch s.Algorithm {
	case FixedWindow, SlidingLog, SlidingWindow:
	case SlidingBuckets:
		buckets = true
	case TokenBucket, LeakyBucket:
		bucket = true
	case LeakyQueue:
		queue = true
	case "":
		p |= algorithmEmpty
	default:
		p |= algorithmUnknown
	}
	// Each range is judged with one comparison on a valid Spec: a value
	// below the range wraps round to above it.
	if uint64(s.Limit-1) >= MaxLimit {
		if s.Limit < 1 {
			p |= limitNotPositive
		} else {
			p |= limitTooLarge
		}
	}
	if uint64(s.Window-MinWindow) > uint64(MaxWindow-MinWindow) {
		switch {
		case s.Window <= 0:
			p |= windowNotPositive
		case s.Window < MinWindow:
			p |= windowTooShort
		default:
			p |= windowTooLong
		}
	}
	// Burst, Buckets and MaxDelay depend on the kind (whether they apply
	// at all): none is judged against an unknown one.
	if p&(algorithmEmpty|algorithmUnknown) != 0 {
		return s.problemsError(p)
	}
	rateOK := p == 0 // Limit and Window are valid
	windowOK := p&(windowNotPositive|windowTooShort|windowTooLong) == 0
	if bucket {
		switch {
		case uint64(s.Burst) > MaxLimit:
			if s.Burst < 0 {
				p |= burstNegative
			} else {
				p |= burstTooLarge
			}
		// Refilling a whole bucket takes Burst·Window/Limit.
		case rateOK && mulDivCeil(s.burst(), int64(s.Window), s.Limit) > int64(MaxWindow):
			p |= burstRefill
		}
	} else if s.Burst != 0 {
		p |= burstNotApplicable
	}
	if buckets {
		switch {
		case uint(s.Buckets-1) >= MaxBuckets:
			if s.Buckets < 1 {
				p |= bucketsTooFew
			} else {
				p |= bucketsTooMany
			}
		case windowOK && int64(s.Window)%int64(s.Buckets) != 0:
			p |= bucketsNotDividing
		}
	} else if s.Buckets != 0 {
		p |= bucketsNotApplicable
	}
	if queue {
		switch {
		case uint64(s.MaxDelay) > uint64(MaxWindow):
			if s.MaxDelay < 0 {
				p |= maxDelayNegative
			} else {
				p |= maxDelayTooLong
			}
		case rateOK && mulDivFloor(int64(s.MaxDelay), s.Limit, int64(s.Window)) >= MaxLimit:
			p |= maxDelayQueue
		}
	} else if s.MaxDelay != 0 {
		p |= maxDelayNotApplicable
	}
	if p != 0 {
		return s.problemsError(p)
	}
	return nil
}

// A specProblem is a rule a Spec breaks, one bit each, in the order
// Validate reports them.
type specProblem uint32

const (
	algorithmEmpty specProblem = 1 << iota
	algorithmUnknown
	limitNotPositive
	limitTooLarge
	windowNotPositive
	windowTooShort
	windowTooLong
	burstNegative
	burstTooLarge
	burstRefill // takes longer than MaxWindow to refill
	burstNotApplicable
	bucketsTooFew
	bucketsTooMany
	bucketsNotDividing // do not divide Window
	bucketsNotApplicable
	maxDelayNegative
	maxDelayTooLong
	maxDelayQueue // queues MaxLimit requests or more
	maxDelayNotApplicable
)

// problemsError returns the error of Validate of s, which breaks the
// rules p (not 0): the *SpecError of the one rule, or those of each rule
// in order, joined.
func (s Spec) problemsError(p specProblem) error {
	var errs []error
	for q := specProblem(1); q != 0 && q <= p; q <<= 1 {
		if p&q != 0 {
			errs = append(errs, s.problemError(q))
		}
	}
	return errlist.Join(errs)
}

// problemError returns the *SpecError of the rule q that s breaks.
func (s Spec) problemError(q specProblem) *SpecError {
	bad := func(field, format string, args ...any) *SpecError {
		return &SpecError{Spec: s, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch q {
	case algorithmEmpty:
		return bad("Algorithm", "is empty; want one of %s", kindList)
	case algorithmUnknown:
		return bad("Algorithm", "unknown kind %q; want one of %s", string(s.Algorithm), kindList)
	case limitNotPositive:
		return bad("Limit", "must be positive, got %d", s.Limit)
	case limitTooLarge:
		return bad("Limit", "must be at most %d, got %d", MaxLimit, s.Limit)
	case windowNotPositive:
		return bad("Window", "must be positive, got %s", s.Window)
	case windowTooShort:
		return bad("Window", "must be at least %s, got %s", MinWindow, s.Window)
	case windowTooLong:
		return bad("Window", "must be at most %s, got %s", MaxWindow, s.Window)
	case burstNegative:
		return bad("Burst", "must be at least 1 (or 0 for Limit), got %d", s.Burst)
	case burstTooLarge:
		return bad("Burst", "must be at most %d, got %d", MaxLimit, s.Burst)
	case burstRefill:
		return bad("Burst", "%d takes longer than %s to refill at %d per %s", s.burst(), MaxWindow, s.Limit, s.Window)
	case burstNotApplicable:
		return bad("Burst", "applies only to %s and %s, not %s", TokenBucket, LeakyBucket, s.Algorithm)
	case bucketsTooFew:
		return bad("Buckets", "must be at least 1 for %s, got %d", SlidingBuckets, s.Buckets)
	case bucketsTooMany:
		return bad("Buckets", "must be at most %d, got %d", MaxBuckets, s.Buckets)
	case bucketsNotDividing:
		return bad("Buckets", "%d does not divide Window %s (%d ns) exactly", s.Buckets, s.Window, int64(s.Window))
	case bucketsNotApplicable:
		return bad("Buckets", "applies only to %s, not %s", SlidingBuckets, s.Algorithm)
	case maxDelayNegative:
		return bad("MaxDelay", "must not be negative, got %s", s.MaxDelay)
	case maxDelayTooLong:
		return bad("MaxDelay", "must be at most %s, got %s", MaxWindow, s.MaxDelay)
	case maxDelayQueue:
		return bad("MaxDelay", "%s queues more than %d requests at %d per %s", s.MaxDelay, MaxLimit, s.Limit, s.Window)
	}
	return bad("MaxDelay", "applies only to %s, not %s", LeakyQueue, s.Algorithm) // maxDelayNotApplicable
}
