package algorithms

// logEvent is a group of accepted units that arrived at one instant.
type logEvent struct {
	t, n int64
}

// slidingLog is the state of one sliding_log key: the accepted events,
// oldest first, and their total cost. The events are a ring of n in ev,
// from ev[head] on (wrapping at len(ev)). Memory is 16 bytes per event the
// ring has room for: room doubled as needed, so up to twice the most
// distinct accepted instants the window has held at once since the key
// last had two or more, and never more than Limit (every event holds a
// unit of the at most Limit in the window): at most 16·L bytes. The store
// keeps a key of one event without a slidingLog, in line in its slot (see
// logTable), and makes one from it to decide on.
type slidingLog struct {
	ev      []logEvent
	head, n int
	sum     int64
}

// at returns the i-th event, oldest first (0 <= i < n).
func (s *slidingLog) at(i int) *logEvent {
	j := s.head + i
	if j >= len(s.ev) {
		j -= len(s.ev)
	}
	return &s.ev[j]
}

// prune forgets the events no longer in the window at t (those with ts < t−W).
func (s *slidingLog) prune(p *params, t int64) {
	for s.n > 0 && s.ev[s.head].t < t-p.window {
		s.sum -= s.ev[s.head].n
		s.n--
		if s.head++; s.head == len(s.ev) {
			s.head = 0
		}
	}
	if s.n == 0 {
		s.head = 0
	}
}

// latest returns the newest accepted instant, or t when there is none.
func (s *slidingLog) latest(t int64) int64 {
	if s.n > 0 {
		return max(t, s.at(s.n-1).t)
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
			newest = s.at(s.n - 1).t
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
	for i := 0; i < s.n && sum+m > p.limit; i++ {
		e := s.at(i)
		sum -= e.n
		if sum+m <= p.limit {
			return e.t + p.window + 1 - t
		}
	}
	if sum+m <= p.limit {
		return 0
	}
	// Only the units accepted at t remain.
	return p.window + 1
}

// commit records cost n accepted at t.
func (s *slidingLog) commit(p *params, t, n int64) {
	s.sum += n
	if s.n > 0 {
		if e := s.at(s.n - 1); e.t == t {
			e.n += n
			return
		}
	}
	if s.n == len(s.ev) {
		// Full: double the room, up to Limit (more events than that
		// cannot be in the window).
		ev := make([]logEvent, max(min(2*int64(len(s.ev)), p.limit), int64(s.n)+1))
		s.copyTo(ev)
		s.ev, s.head = ev, 0
	}
	*s.at(s.n) = logEvent{t, n}
	s.n++
}

// copyTo copies the events, oldest first, to the start of ev.
func (s *slidingLog) copyTo(ev []logEvent) {
	k := copy(ev, s.ev[s.head:min(s.head+s.n, len(s.ev))])
	copy(ev[k:], s.ev[:s.n-k])
}

// used returns the cost accepted within the window at t, or at the newest
// logged instant when that is later. A sweep or an eviction's sample that
// looks at a key it keeps must not move it on, for a request at an earlier
// instant (a call that read the clock before them) is decided on the
// events it still holds: it forgets only the events out of the window at
// the newest logged instant, which no request can count again (every one
// is decided at that instant or later).
func (s *slidingLog) used(p *params, t int64) int64 {
	if s.n > 0 {
		s.prune(p, s.at(s.n-1).t)
	}
	v := s.view(p, s.latest(t))
	return v.sum
}

func (s *slidingLog) clone() *slidingLog {
	c := &slidingLog{n: s.n, sum: s.sum}
	if s.n > 0 {
		c.ev = make([]logEvent, s.n)
		s.copyTo(c.ev)
	}
	return c
}

// giveBack gives back at t up to n units of the event logged nearest to
// at, the caller's reckoning of the Take's instant (a tie to the older; see
// [GiveBacker.GiveBack]), among those still in the window at t, when at is
// still in the window itself; it reports whether any came back. t is no
// earlier than s.latest. It prunes nothing (see view): the events that
// have left the window at t stay for requests decided earlier.
func (s *slidingLog) giveBack(p *params, t, n, at int64) bool {
	if at < t-p.window {
		// The Take's instant has left the window: its units no longer
		// count, and those nearest it are other requests'.
		return false
	}
	v := s.view(p, t)
	i := v.n - 1
	for i >= 0 && v.at(i).t > at {
		i--
	}
	// v.at(i) is the newest at or before at (if i >= 0), v.at(i+1) the
	// oldest after it (if any).
	if j := i + 1; j < v.n && (i < 0 || v.at(j).t-at < at-v.at(i).t) {
		i = j
	}
	if i < 0 {
		return false
	}
	e := v.at(i) // s's event: v shares s's storage
	k := min(n, e.n)
	e.n -= k
	s.sum -= k
	if e.n == 0 {
		// Remove it: the newer events move back by one.
		for j := i + s.n - v.n; j < s.n-1; j++ {
			*s.at(j) = *s.at(j + 1)
		}
		if s.n--; s.n == 0 {
			s.head = 0
		}
	}
	return true
}
