package client

import "fmt"

// CheckLines has every line checked each time its holder lets it go, until
// the function it returns is called: its links agree both ways, its turns
// increase along it and the requests without a turn come last. A break is
// reported to fail, once per line state.
func CheckLines(fail func(string)) (stop func()) {
	check := func(l *line) {
		var prev *turn
		for x := l.head; x != nil; prev, x = x, x.next {
			switch {
			case x.prev != prev:
				fail("a turn's prev is not the turn before it")
				return
			case prev == nil:
			case prev.at.IsZero() && !x.at.IsZero():
				fail(fmt.Sprintf("a turn at %v behind a request without one", x.at))
				return
			case !x.at.IsZero() && !x.at.After(prev.at):
				fail(fmt.Sprintf("a turn at %v behind one at %v", x.at, prev.at))
				return
			}
		}
		if l.tail != prev {
			fail("the line's tail is not its last turn")
		}
	}
	lineCheck.Store(&check)
	return func() { lineCheck.Store(nil) }
}
