package adaptive

// WindowWalk returns a function that walks the windows of c from the one
// in course now to the end of the list (those judged since included),
// and reports the requests counted in them, those counted over their
// threshold, and the windows still provisional, ended but not sealed, or
// sealed with a request still counting. A window out of order (before the
// end of the one before it) is that of a restart, which holds the counts
// of the windows before it: they are not counted again (the restart must
// have begun from the window in course now).
func WindowWalk(c *Controller) func() (n, over int64, prov, unsealed, counting int) {
	first := c.win.Load()
	return func() (n, over int64, prov, unsealed, counting int) {
		now := c.cfg.Clock.Now()
		var prev *window
		for w := first; w != nil; w = w.next.Load() {
			if prev != nil && w.from.Before(prev.until) {
				n, over, prov = 0, 0, 0
			}
			prev = w
			n += w.n.Load()
			over += w.over.Load()
			if w.prov.Load() {
				prov++
			}
			st := w.state.Load()
			if !now.Before(w.until) && st&sealed == 0 {
				unsealed++
			}
			if st&^sealed != 0 {
				counting++
			}
		}
		return
	}
}
