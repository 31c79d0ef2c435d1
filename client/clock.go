package client

import (
	"context"
	"time"
)

// A Clock tells the time and waits. A [Transport] waits only through Sleep
// — for its turn in the queue, for a server's hold to pass, between retries —
// and reads Now for Retry-After dates and Unix reset times, so a test that
// injects a Clock (see [WithClock]) drives every wait in virtual time and
// never sleeps. A Clock is also an [algorithms.Clock]: the private in-memory
// store of a Transport reads the same one (on [SystemClock], its monotonic
// part alone, as the store does by default: it is asked for durations
// only). A context's deadline is not virtual: the Transport compares it
// with the time left in real time (time.Until) when it decides whether a
// retry can leave before it. Nor is reading a refusal's body before a
// retry, which is I/O: a body that stalls is closed after a second of real
// time (see [Transport.RoundTrip]).
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d and returns nil, or returns ctx.Err() as soon as
	// ctx is done, whichever comes first. The Transport never calls it with
	// d <= 0.
	Sleep(ctx context.Context, d time.Duration) error
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	// A ctx done already ends it at once, however short d: a select
	// between a timer that has fired and a done ctx would pick either.
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SystemClock is the Clock of real time: time.Now and a timer. It is the
// default.
var SystemClock Clock = systemClock{}
