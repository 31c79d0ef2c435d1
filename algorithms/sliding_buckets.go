package algorithms

// slidingBuckets is the state of one sliding_buckets key: the counts of the
// Buckets sub-windows up to sub-window index last (sub-window j covers
// [j·S, (j+1)·S) with S = W/Buckets), as a ring indexed by j mod Buckets,
// and their sum. at is last mod Buckets, the ring index of the newest
// sub-window, worked out once (where the ring is loaded or rolled) for the
// calls that count in it or read it. Memory is 4 bytes per bucket.
type slidingBuckets struct {
	last   int64
	sum    int64
	at     int64
	counts []uint32
}

// subOf returns the sub-window of t, floor(t/S): without a division when t
// is in the newest one, as it is for a key's every request but the first
// of each sub-window.
func (s *slidingBuckets) subOf(p *params, t int64) int64 {
	// t >= base, so the difference, below 2^64, is exact as a uint64.
	if base := s.last * p.sub; t >= base && uint64(t-base) < uint64(p.sub) {
		return s.last
	}
	return floorDiv(t, p.sub)
}

// roll moves the ring forward to the sub-window of t, zeroing the buckets
// that leave the window. t must be no earlier than s.latest.
func (s *slidingBuckets) roll(p *params, t int64) {
	s.rollTo(p, s.subOf(p, t))
}

// rollTo moves the ring forward to sub-window j (see roll).
func (s *slidingBuckets) rollTo(p *params, j int64) {
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
	s.last, s.at = j, mod(j, p.buckets)
}

// latest returns the earliest instant of the newest sub-window seen, or t if later.
func (s *slidingBuckets) latest(p *params, t int64) int64 {
	return max(t, s.last*p.sub)
}

// bucketsView is a sliding_buckets ring as roll(p, t) would leave it,
// without rolling it: the ring s read only, moved to sub-window j >=
// s.last, whose sub-windows after s.last count 0, and the sum of the
// sub-windows in the window there. A call that counts nothing (a peek, a
// denied Take, a give-back) decides on a view: rolling the ring to a
// sub-window later than its newest would forget the sub-windows that a
// request decided at an earlier instant (its clock read before the
// call's, or behind it) still counts, and move the instant at which such
// a request is decided. The ring moves on only when a request is counted
// in it.
//
// A view holds no pointer to its ring: its methods are passed the ring
// (a pending check holds both by value, and a pointer into it would move
// the checks of every Take to the heap).
type bucketsView struct {
	j, sum int64
}

// view returns s as roll(p, t) would leave it, without changing s; t must
// be no earlier than s.latest.
func (s *slidingBuckets) view(p *params, t int64) bucketsView {
	j := s.subOf(p, t)
	v := bucketsView{max(j, s.last), s.sum}
	switch {
	case j <= s.last:
	case j-s.last >= p.buckets:
		v.sum = 0
	default:
		idx := mod(s.last+1, p.buckets)
		for i := s.last + 1; i <= j; i++ {
			v.sum -= int64(s.counts[idx])
			if idx++; idx == p.buckets {
				idx = 0
			}
		}
	}
	return v
}

// decide decides cost n at t after roll(p, t); it changes nothing.
func (s *slidingBuckets) decide(p *params, t, n int64, consume bool) Decision {
	return bucketsView{s.last, s.sum}.decide(s, p, t, n, consume)
}

// decide decides cost n at t, in sub-window v.j, a view of s; it changes
// nothing.
func (v bucketsView) decide(s *slidingBuckets, p *params, t, n int64, consume bool) Decision {
	d := Decision{Limit: p.limit, Allowed: v.sum+n <= p.limit}
	sum := v.sum
	if d.Allowed && consume {
		sum += n
	} else if !d.Allowed {
		d.RetryAfter = dur(v.wait(s, p, t, n, 0))
	}
	d.Remaining = max(p.limit-sum, 0)
	if sum > 0 {
		// The window is clear once the newest non-empty bucket has left
		// it. The sub-windows after the ring's newest count 0.
		newest := v.j
		if !d.Allowed || !consume {
			// sum > 0: a bucket of the ring counts. Bounded all the same,
			// so that a ring whose counts and sum ever disagreed would
			// give a wrong ResetAfter, not hold the shard's lock forever.
			newest = s.last
			for i := int64(1); i < p.buckets && s.counts[mod(newest, p.buckets)] == 0; i++ {
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
		d.NextAfter = dur(v.wait(s, p, t, d.Remaining+1, extra))
	}
	return d
}

// wait returns the shortest wait after which m units are available, when
// the current bucket also holds extra units and they are not available at
// t (sum+extra+m > Limit: decide asks only then). The bucket j−B+i leaves
// the window when sub-window j+i begins.
func (v bucketsView) wait(s *slidingBuckets, p *params, t, m, extra int64) int64 {
	sum := v.sum + extra
	// The ring index of bucket j−B+i is (j+i) mod B. The buckets after the
	// ring's newest sub-window (j−B+i > last) count 0: none of them makes
	// room.
	counts, b := s.counts, p.buckets
	room := p.limit - m // available once sum <= room
	// Once every bucket before the current one has left, the window holds
	// the current one (counting 0 when the ring's newest is earlier) and
	// extra: when that is still more than room, no bucket leaving before
	// the window ends makes room, and the walk below (B−1 buckets, a
	// hot key's usual case) would only confirm it.
	cur := extra
	if v.j == s.last {
		cur += int64(counts[s.at])
	}
	if cur > room {
		return (v.j+b)*p.sub - t
	}
	idx := mod(v.j+1, b)
	for i, end := int64(1), min(b, s.last-v.j+b+1); i < end; i++ {
		if c := int64(counts[idx]); c != 0 {
			if sum -= c; sum <= room {
				return (v.j+i)*p.sub - t
			}
		}
		if idx++; idx == b {
			idx = 0
		}
	}
	return (v.j+p.buckets)*p.sub - t
}

// commit records cost n accepted at t, after roll(p, t).
func (s *slidingBuckets) commit(p *params, n int64) {
	s.counts[s.at] += uint32(n)
	s.sum += n
}

// used returns the cost counted in the window at t, or at the ring's
// newest sub-window when t is earlier (where a request at t is decided):
// the buckets that have left the window since the ring last moved do not
// count.
func (s *slidingBuckets) used(p *params, t int64) int64 {
	if s.idle(p, t) {
		return 0
	}
	return s.view(p, s.latest(p, t)).sum
}

// idle reports whether every bucket of the window at t is empty and t is
// not before the newest sub-window seen (a request at t is decided there).
func (s *slidingBuckets) idle(p *params, t int64) bool {
	j := floorDiv(t, p.sub)
	return (s.sum == 0 && j >= s.last) || j-s.last >= p.buckets
}

func (s *slidingBuckets) clone() *slidingBuckets {
	return &slidingBuckets{last: s.last, sum: s.sum, at: s.at, counts: append([]uint32(nil), s.counts...)}
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
// [GiveBacker.GiveBack]), if it is still in the window at t; it reports
// whether any came back. t is no earlier than s.latest. It rolls nothing
// (see bucketsView): a bucket still in the window at t is where the ring
// holds it.
func (s *slidingBuckets) giveBack(p *params, t, n, end int64) bool {
	j := windowOf(end, p.sub) + 1 - p.buckets
	if j > s.last || j <= floorDiv(t, p.sub)-p.buckets {
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
