package middleware_test

import (
	"context"
	"time"
)

// beforeTurn is the context of a request whose deadline comes before its
// leaky_queue turn: its Deadline is d from now, which the middleware reads
// to refuse the request at once, and it never ends. A
// context.WithTimeout(d) ends at d on the system clock, which the fake
// clock that places the turn does not hold back: a loaded machine that
// stalls the test for d (a second, under -race on 2 CPUs at a load of
// 10-15) turns the refusal into a store call on an ended context, or a
// refund that fails, and the test's outcome into another. What the tests
// using it check is the refusal of a request whose context is still
// live.
func beforeTurn(d time.Duration) context.Context {
	return deadlineOnly{Context: context.Background(), at: time.Now().Add(d)}
}

// deadlineOnly is a context with a deadline that never ends (see
// beforeTurn).
type deadlineOnly struct {
	context.Context
	at time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.at, true }

// beforeTurnTimed is beforeTurn(d) with in, which, called once the request
// has been served, returns the bounds of the time its deadline left it
// while it was served: d when it was made (hi), and the time left when in
// is called (lo). The middleware reads the time left on the system clock
// (the deadline's, on which the context would end), somewhere between the
// two: lo <= that time <= hi however long a loaded machine stalls the
// test, and the bounds are as tight as the serving is short.
func beforeTurnTimed(d time.Duration) (ctx context.Context, in func() (lo, hi time.Duration)) {
	at := time.Now().Add(d)
	return deadlineOnly{Context: context.Background(), at: at}, func() (time.Duration, time.Duration) {
		return time.Until(at), d
	}
}
