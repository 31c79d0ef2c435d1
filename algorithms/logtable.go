package algorithms

import "slices"

// logTable holds the sliding_log state of a table's keys: a keyTable whose
// cell holds a key's one event in line, and a side array of logs for the
// keys that have logged two or more distinct instants.
//
//	in line (y = 0): t = the instant of the key's one event, x = its cost
//	                 (x = 0: no event, all given back; then t = 0)
//	spilled (y > 0): the key's log is logs[y−1], its hash owners[y−1];
//	                 t = x = 0
//
// Most keys of a large key set hold one event (a client that made one
// request in the window), and in line such a key takes a slot of the key
// table, as a fixed-size kind's key does: no map entry, no pointer for
// the garbage collector, no struct or array of its own. A key spills when
// it logs a second distinct instant. It folds back in line when it is
// found down to one event where that costs nothing on a decision's path:
// by a sweep's or an eviction's look at it. A commit that forgets all but
// one event leaves the key spilled: a client whose requests come about a
// window apart would otherwise spill and fold on nearly every request, and
// a fold moves another key's log (so a key in line holds at most one
// event, a spilled one at least one). So does a give-back that leaves one
// (it folds the key only when it leaves none): a client whose requests are
// each taken and given back (a limit on failed logins, a successful one)
// with one other event in the window would otherwise spill, making a log,
// on every Take.
//
// logs is dense, as ringTable's rings are: removing a key's log moves the
// last one into its place (its key found through owners).
type logTable struct {
	kt     *keyTable
	logs   []slidingLog
	owners []uint64
}

// spillRoom is the room for events of a log when its key spills.
const spillRoom = 2

func newLogTable() *logTable { return &logTable{kt: newKeyTable()} }

// oneLog returns the log of the one event e (none when e.n is 0), held in
// *buf.
func oneLog(e logEvent, buf *[1]logEvent) slidingLog {
	buf[0] = e
	s := slidingLog{ev: buf[:]}
	if e.n > 0 {
		s.n, s.sum = 1, e.n
	}
	return s
}

// inline returns the event of a cell in line.
func (c cell) inline() logEvent { return logEvent{c.t, int64(c.x)} }

// load returns the log of the key in slot i: a spilled key's, sharing its
// events (valid until the table next changes), or a log of a key's event
// in line held in *buf.
func (lt *logTable) load(i int, buf *[1]logEvent) slidingLog {
	c := lt.kt.cs[i]
	if c.y != 0 {
		return lt.logs[c.y-1]
	}
	return oneLog(c.inline(), buf)
}

// put inserts h, which must not be held, with cost n logged at t.
func (lt *logTable) put(h uint64, t, n int64) {
	lt.kt.put(h, cell{t: t, x: uint32(n)})
}

// commit records cost n accepted at t on the key in slot i, after
// forgetting the events that have left the window at t: t is the key's
// newest instant from then on, no earlier than its newest logged one. The
// cost fits a cell's 32 bits: the events in the window at t cost at most
// Limit <= MaxLimit together.
func (lt *logTable) commit(p *params, i int, t, n int64) {
	c := &lt.kt.cs[i]
	if c.y == 0 {
		switch {
		case c.x == 0 || c.t < t-p.window:
			*c = cell{t: t, x: uint32(n)}
		case c.t == t:
			c.x += uint32(n)
		default:
			// A second instant in the window: the key spills.
			e := c.inline()
			r := lt.spill(lt.kt.hs[i])
			s := &lt.logs[r]
			s.ev[0], s.n, s.sum = e, 1, e.n
			s.commit(p, t, n)
			*c = cell{y: r + 1}
		}
		return
	}
	s := &lt.logs[c.y-1]
	s.prune(p, t)
	s.commit(p, t, n)
}

// store writes back s, the log of the key in slot i as load returned it,
// changed by a give-back (which only takes events away). A spilled key
// left without events folds back in line.
func (lt *logTable) store(i int, s *slidingLog) {
	c := &lt.kt.cs[i]
	if c.y == 0 {
		*c = cell{}
		if s.n > 0 {
			e := s.at(0)
			*c = cell{t: e.t, x: uint32(e.n)}
		}
		return
	}
	lt.logs[c.y-1] = *s
	if s.n == 0 {
		lt.fold(i)
	}
}

// used returns the cost the key in slot i has accepted within the window
// at t, or at its newest instant when that is later (see slidingLog.used).
// A spilled key found with one event folds back in line.
func (lt *logTable) used(p *params, i int, t int64) int64 {
	c := lt.kt.cs[i]
	if c.y == 0 {
		var buf [1]logEvent
		s := oneLog(c.inline(), &buf)
		return s.used(p, t)
	}
	s := &lt.logs[c.y-1]
	u := s.used(p, t)
	if s.n <= 1 {
		lt.fold(i)
	}
	return u
}

// removeAt deletes the key in slot i of lt.kt and its log.
func (lt *logTable) removeAt(i int) {
	if y := lt.kt.cs[i].y; y != 0 {
		lt.release(y - 1)
	}
	lt.kt.removeAt(i)
}

// spill gives h, whose cell is in line, a log of its own with room for
// spillRoom events and returns its index.
func (lt *logTable) spill(h uint64) uint32 {
	r := len(lt.logs)
	lt.logs = append(lt.logs, slidingLog{ev: make([]logEvent, spillRoom)})
	lt.owners = append(lt.owners, h)
	return uint32(r)
}

// fold puts the log of the spilled key in slot i, which holds at most one
// event, back in line.
func (lt *logTable) fold(i int) {
	c := &lt.kt.cs[i]
	r := c.y - 1
	s := &lt.logs[r]
	*c = cell{}
	if s.n > 0 {
		e := s.at(0)
		*c = cell{t: e.t, x: uint32(e.n)}
	}
	lt.release(r)
}

// release removes log r, moving the last log into its place.
func (lt *logTable) release(r uint32) {
	last := uint32(len(lt.logs) - 1)
	if r != last {
		lt.logs[r] = lt.logs[last]
		h := lt.owners[last]
		lt.owners[r] = h
		j, _ := lt.kt.find(h)
		lt.kt.cs[j].y = r + 1
	}
	lt.logs[last] = slidingLog{} // its events array goes
	lt.logs = lt.logs[:last]
	lt.owners = lt.owners[:last]
}

// shrink gives memory back when the key table is less than a quarter
// full, and the logs' arrays when they are.
func (lt *logTable) shrink() {
	lt.kt.shrink()
	if cap(lt.logs) > 4*len(lt.logs) && cap(lt.logs) > 64 {
		lt.logs, lt.owners = slices.Clone(lt.logs), slices.Clone(lt.owners)
	}
}

// logView is a sliding_log key's log as a check of a Take decides on it
// (pending.lv), holding no pointer into itself, so that a Take's pending
// checks stay on the stack: log (a spilled key's, sharing its events, or a
// copy of its own) or, when log.ev is nil, one, the event of a key in
// line (none when its cost is 0).
type logView struct {
	log slidingLog
	one logEvent
}

// loadView returns the view of the log of the key in slot i of lt.kt.
func (lt *logTable) loadView(i int) logView {
	c := lt.kt.cs[i]
	if c.y != 0 {
		return logView{log: lt.logs[c.y-1]}
	}
	return logView{one: c.inline()}
}

// get returns the log v stands for, an event in line held in *buf.
func (v *logView) get(buf *[1]logEvent) slidingLog {
	if v.log.ev != nil {
		return v.log
	}
	return oneLog(v.one, buf)
}

// latest returns the newest logged instant, or t when there is none or t
// is later.
func (v *logView) latest(t int64) int64 {
	if v.log.ev != nil {
		return v.log.latest(t)
	}
	if v.one.n > 0 {
		return max(t, v.one.t)
	}
	return t
}

// view returns v as slidingLog.view(p, t) leaves it: without the events
// that have left the window at t.
func (v *logView) view(p *params, t int64) logView {
	if v.log.ev != nil {
		return logView{log: v.log.view(p, t)}
	}
	if v.one.t < t-p.window {
		return logView{}
	}
	return *v
}

// decide decides cost n at t on v (see slidingLog.decide).
func (v *logView) decide(p *params, t, n int64, consume bool) Decision {
	var buf [1]logEvent
	s := v.get(&buf)
	return s.decide(p, t, n, consume)
}

// with returns v with cost n logged at t, its newest instant, and nothing
// forgotten, sharing no storage with v or its key.
func (v *logView) with(p *params, t, n int64) logView {
	if v.log.ev == nil {
		switch {
		case v.one.n == 0:
			return logView{one: logEvent{t, n}}
		case v.one.t == t:
			return logView{one: logEvent{t, v.one.n + n}}
		}
	}
	var buf [1]logEvent
	s := v.get(&buf)
	c := s.clone()
	c.commit(p, t, n)
	return logView{log: *c}
}
