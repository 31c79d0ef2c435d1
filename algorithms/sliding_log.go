package algorithms

// logEvent is a group of accepted units that arrived at one instant.
type logEvent struct {
	t, n int64
}

// slidingLog is the state of one sliding_log key: the accepted events, oldest
// first, from ev[head:], and their total cost. Memory is 16 bytes per
// distinct accepted instant still in the window, so at most 16·L bytes.
type slidingLog struct {
	ev   []logEvent
	head int
	sum  int64
}

// prune forgets the events no longer in the window at t (those with ts < t−W).
func (s *slidingLog) prune(p *params, t int64) {
	for s.head < len(s.ev) && s.ev[s.head].t < t-p.window {
		s.sum -= s.ev[s.head].n
		s.head++
	}
	if s.head == len(s.ev) {
		s.ev, s.head = s.ev[:0], 0
	} else if s.head > 32 && s.head*2 >= len(s.ev) {
		m := copy(s.ev, s.ev[s.head:])
		s.ev, s.head = s.ev[:m], 0
	}
}

// latest returns the newest accepted instant, or t when there is none.
func (s *slidingLog) latest(t int64) int64 {
	if s.head < len(s.ev) {
		return max(t, s.ev[len(s.ev)-1].t)
	}
	return t
}

// decide decides cost n at t, where t is no earlier than s.latest; it reads
// s after prune(p, t) and changes nothing.
func (s *slidingLog) decide(p *params, t, n int64, consume bool) Decision {
	d := Decision{Limit: p.limit, Allowed: s.sum+n <= p.limit}
	sum := s.sum
	if d.Allowed && consume {
		sum += n
	} else if !d.Allowed {
		d.RetryAfter = dur(s.wait(p, t, n, 0))
	}
	d.Remaining = max(p.limit-sum, 0)
	if sum > 0 {
		newest := t
		if !d.Allowed || !consume {
			newest = s.ev[len(s.ev)-1].t
		}
		d.ResetAfter = dur(newest + p.window + 1 - t)
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
// the log also holds extra units accepted at t. An event at ts leaves the
// window at ts+W+1.
func (s *slidingLog) wait(p *params, t, m, extra int64) int64 {
	sum := s.sum + extra
	for i := s.head; i < len(s.ev) && sum+m > p.limit; i++ {
		sum -= s.ev[i].n
		if sum+m <= p.limit {
			return s.ev[i].t + p.window + 1 - t
		}
	}
	if sum+m <= p.limit {
		return 0
	}
	// Only the units accepted at t remain.
	return p.window + 1
}

// commit records cost n accepted at t.
func (s *slidingLog) commit(t, n int64) {
	s.sum += n
	if last := len(s.ev) - 1; last >= s.head && s.ev[last].t == t {
		s.ev[last].n += n
		return
	}
	s.ev = append(s.ev, logEvent{t, n})
}

// used returns the cost accepted within the window at t.
func (s *slidingLog) used(p *params, t int64) int64 {
	s.prune(p, max(t, s.latest(t)))
	return s.sum
}

// idle reports whether no accepted event is within the window at t.
func (s *slidingLog) idle(p *params, t int64) bool { return s.used(p, t) == 0 }

func (s *slidingLog) clone() *slidingLog {
	c := &slidingLog{ev: append([]logEvent(nil), s.ev[s.head:]...), sum: s.sum}
	return c
}

// giveBack gives back at t up to n units of the event logged nearest to
// at, the caller's reckoning of the Take's instant (a tie to the older; see
// [GiveBacker.GiveBack]), among those still in the window, when at is
// still in the window itself; it reports whether any came back.
func (s *slidingLog) giveBack(p *params, t, n, at int64) bool {
	tl := s.latest(t)
	s.prune(p, tl)
	if at < tl-p.window {
		// The Take's instant has left the window: its units no longer
		// count, and those nearest it are other requests'.
		return false
	}
	i := len(s.ev) - 1
	for i >= s.head && s.ev[i].t > at {
		i--
	}
	// ev[i] is the newest at or before at (if i >= head), ev[i+1] the
	// oldest after it (if any).
	if j := i + 1; j < len(s.ev) && (i < s.head || s.ev[j].t-at < at-s.ev[i].t) {
		i = j
	}
	if i < s.head {
		return false
	}
	e := &s.ev[i]
	k := min(n, e.n)
	e.n -= k
	s.sum -= k
	if e.n == 0 {
		s.ev = append(s.ev[:i], s.ev[i+1:]...)
	}
	return true
}
