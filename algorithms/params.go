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
// of its Spec's ([Check.Limit]): the limit and the capacity a decision
// compares with and reports. A window kind's state, and its moves (to a
// new window or sub-window, counting units, forgetting what left the
// window), do not depend on the limit: only which requests are admitted
// does. So a judged check is decided on these params, on the state its
// Spec's table keeps, and recorded there as any other.
func (p *params) judged(limit int64) params {
	j := *p
	j.limit, j.capacity = limit, limit
	return j
}
