package algorithms

// slidingBuckets is the state of one sliding_buckets key: the counts of the
// Buckets sub-windows up to sub-window index last (sub-window j covers
// [j·S, (j+1)·S) with S = W/Buckets), as a ring indexed by j mod Buckets,
// and their sum. Memory is 4 bytes per bucket.
type slidingBuckets struct {
	last   int64
	sum    int64
	counts []uint32
}

func newSlidingBuckets(p *params, t int64) *slidingBuckets {
	return &slidingBuckets{last: floorDiv(t, p.sub), counts: make([]uint32, p.buckets)}
}

// roll moves the ring forward to the sub-window of t, zeroing the buckets
// that leave the window. t must be no earlier than s.latest.
func (s *slidingBuckets) roll(p *params, t int64) {
	j := floorDiv(t, p.sub)
	if j <= s.last {
		return
	}
	if j-s.last >= p.buckets {
		clear(s.counts)
		s.sum = 0
	} else {
		idx := mod(s.last+1, p.buckets)
		for i := s.last + 1; i <= j; i++ {
			s.sum -= int64(s.counts[idx])
			s.counts[idx] = 0
			if idx++; idx == p.buckets {
				idx = 0
			}
		}
	}
	s.last = j
}

// latest returns the earliest instant of the newest sub-window seen, or t if later.
func (s *slidingBuckets) latest(p *params, t int64) int64 {
	return max(t, s.last*p.sub)
}

// decide decides cost n at t after roll(p, t); it changes nothing.
func (s *slidingBuckets) decide(p *params, t, n int64, consume bool) Decision {
	d := Decision{Limit: p.limit, Allowed: s.sum+n <= p.limit}
	sum := s.sum
	if d.Allowed && consume {
		sum += n
	} else if !d.Allowed {
		d.RetryAfter = dur(s.wait(p, t, n, 0))
	}
	d.Remaining = max(p.limit-sum, 0)
	if sum > 0 {
		// The window is clear once the newest non-empty bucket has left it.
		newest := s.last
		if !d.Allowed || !consume {
			for s.counts[mod(newest, p.buckets)] == 0 {
				newest--
			}
		}
		d.ResetAfter = dur((newest+p.buckets)*p.sub - t)
	}
	if d.Remaining < p.limit {
		extra := int64(0)
		if d.Allowed && consume {
			extra = n
		}
		d.NextAfter = dur(s.wait(p, t, d.Remaining+1, extra))
	}
	return d
}

// wait returns the shortest wait after which m units are available, when
// the current bucket also holds extra units and they are not available at
// t (sum+extra+m > Limit: decide asks only then). The bucket j−B+i leaves
// the window when sub-window j+i begins.
func (s *slidingBuckets) wait(p *params, t, m, extra int64) int64 {
	sum := s.sum + extra
	// The ring index of bucket last−B+1 is (last+1) mod B.
	idx := mod(s.last+1, p.buckets)
	for i := int64(1); i < p.buckets; i++ {
		if c := s.counts[idx]; c != 0 {
			sum -= int64(c)
			if sum+m <= p.limit {
				return (s.last+i)*p.sub - t
			}
		}
		if idx++; idx == p.buckets {
			idx = 0
		}
	}
	return (s.last+p.buckets)*p.sub - t
}

// commit records cost n accepted at t, after roll(p, t).
func (s *slidingBuckets) commit(p *params, n int64) {
	s.counts[mod(s.last, p.buckets)] += uint32(n)
	s.sum += n
}

// used returns an upper bound of the cost counted in the window at t.
func (s *slidingBuckets) used(p *params, t int64) int64 {
	if s.idle(p, t) {
		return 0
	}
	return s.sum
}

// idle reports whether every bucket of the window at t is empty and t is
// not before the newest sub-window seen (a request at t is decided there).
func (s *slidingBuckets) idle(p *params, t int64) bool {
	j := floorDiv(t, p.sub)
	return (s.sum == 0 && j >= s.last) || j-s.last >= p.buckets
}

func (s *slidingBuckets) clone() *slidingBuckets {
	return &slidingBuckets{last: s.last, sum: s.sum, counts: append([]uint32(nil), s.counts...)}
}

// mod returns a mod m in [0, m) for m > 0.
func mod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// giveBack gives back at t up to n units of the bucket of a Take whose
// key was to be clear at end, when the bucket's last window ends (see
// [GiveBacker.GiveBack]), if it is still in the ring; it reports whether
// any came back.
func (s *slidingBuckets) giveBack(p *params, t, n, end int64) bool {
	s.roll(p, s.latest(p, t))
	j := windowOf(end, p.sub) + 1 - p.buckets
	if j > s.last || j <= s.last-p.buckets {
		return false
	}
	i := mod(j, p.buckets)
	k := min(n, int64(s.counts[i]))
	if k == 0 {
		return false
	}
	s.counts[i] -= uint32(k)
	s.sum -= k
	return true
}
