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
	if t.proactive {
		// A hold can be extended while we wait (a response in flight
		// brings news), so look again after each wait.
		var waited time.Duration
		for {
			d := t.holds.remaining(key, t.clock.Now())
			if d <= 0 {
				break
			}
			if waited+d > t.maxWait {
				return &WaitError{Key: key, Wait: waited + d, MaxWait: t.maxWait, Held: true}
			}
			if err := t.clock.Sleep(ctx, d); err != nil {
				return err
			}
			waited += d
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
		// For a denied leaky_queue request ResetAfter is the wait it would
		// have had: until the queue drains to now.
		return &WaitError{Key: key, Wait: d.ResetAfter, MaxWait: t.maxWait}
	}
	if d.Delay > 0 {
		return t.clock.Sleep(ctx, d.Delay)
	}
	return nil
}
