package client

import (
	"context"
	"fmt"
	"time"
)

// wait holds the caller until key's hold has passed and its turn in the
// queue has come.
func (t *Transport) wait(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return nil
	}
	var held time.Duration // waited so far for holds to pass
	for {
		if t.proactive {
			// A hold can be extended while we wait (a response in flight
			// brings news), so look again after each wait.
			for {
				d := t.holds.remaining(key, t.clock.Now())
				if d <= 0 {
					break
				}
				if held+d > t.maxWait {
					return &WaitError{Key: key, Wait: held + d, MaxWait: t.maxWait, Held: true}
				}
				if err := t.clock.Sleep(ctx, d); err != nil {
					return err
				}
				held += d
			}
		}
		if t.limiter == nil {
			return nil
		}
		d, err := t.limiter.Allow(ctx, key)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("client: pacing store: %w", err)
		}
		if !d.Allowed {
			// For a denied leaky_queue request ResetAfter is the wait it
			// would have had: until the queue drains to now.
			return &WaitError{Key: key, Wait: d.ResetAfter, MaxWait: t.maxWait}
		}
		if d.Delay <= 0 {
			return nil
		}
		if err := t.clock.Sleep(ctx, d.Delay); err != nil {
			return err
		}
		if !t.proactive || t.firm.remaining(key, t.clock.Now()) <= 0 {
			return nil
		}
		// While this request waited for its turn, a 429 or 503 came back
		// with a Retry-After that has not passed: the server asked for
		// nothing before then, and this request would only earn another
		// refusal. Give the turn up (it stays used: the queue only slows
		// down) and queue again once the hold has passed, one turn after
		// another rather than all at once.
	}
}
