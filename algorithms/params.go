package algorithms

import "time"

// params holds a valid Spec's numbers, precomputed for the transitions.
type params struct {
	kind     Kind
	limit    int64 // L
	window   int64 // W, ns
	capacity int64 // C = Spec.Capacity()
	sub      int64 // sliding_buckets: W/Buckets; otherwise W
	buckets  int64 // sliding_buckets: Buckets; otherwise 1
	maxDelay int64 // leaky_queue: MaxDelay, ns
	// emission is n·W/L for n = 1 as an exact quotient and remainder: the
	// buckets and the queue move by emQ ns and emR/L ns per unit.
	emQ, emR int64
}

func newParams(s Spec) params {
	p := params{
		kind:     s.Algorithm,
		limit:    s.Limit,
		window:   int64(s.Window),
		capacity: s.Capacity(),
		sub:      int64(s.Window),
		buckets:  1,
		maxDelay: int64(s.MaxDelay),
	}
	if s.Algorithm == SlidingBuckets {
		p.buckets = int64(s.Buckets)
		p.sub = int64(s.Window) / int64(s.Buckets)
	}
	p.emQ, p.emR = p.window/p.limit, p.window%p.limit
	return p
}

// dur converts a non-negative nanosecond count to a Duration.
func dur(ns int64) time.Duration { return time.Duration(ns) }

// judged returns p, the params of a window kind, judged at limit instead
// of its Spec's ([Check.Limit]), lower or higher: the limit and the
// capacity a decision compares with and reports. A window kind's state, and its moves (to a
// new window or sub-window, counting units, forgetting what left the
// window), do not depend on the limit: only which requests are admitted
// does. So a judged check is decided on these params, on the state its
// Spec's table keeps, and recorded there as any other.
//
// The limit may be above the Spec's for fixed_window, sliding_window and
// sliding_buckets ([Kind.Raisable]): their state is a count of any size up
// to MaxLimit, counted and moved the same whatever the limit, and their
// decisions compare it with the limit as they would a Spec's
// (sliding_window's, prev·(W−e)/W + curr + n <= limit). The emission
// (emQ, emR) is worked out again for limit, though no window kind uses it,
// so that the params are a Spec's at that limit in every field.
func (p *params) judged(limit int64) params {
	j := *p
	j.limit, j.capacity = limit, limit
	j.emQ, j.emR = j.window/limit, j.window%limit
	return j
}

// judgeable reports whether a check can be judged at limit l on p's Spec
// ([Check.Limit], l != 0): a window kind, 1 <= l <= MaxLimit, and l at
// most the Spec's limit for sliding_log. The cost is checked apart.
func (p *params) judgeable(l int64) bool {
	switch p.kind {
	case FixedWindow, SlidingWindow, SlidingBuckets:
		return l >= 1 && l <= MaxLimit
	case SlidingLog:
		return l >= 1 && l <= p.limit
	}
	return false
}
