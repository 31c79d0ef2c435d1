package client

import (
	"context"
	"time"
)

// wait holds the caller until key's holds have passed and its turn in the
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
		var held time.Duration // waited so far for holds to pass
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
	if t.proactive {
		// A Retry-After can make queued turns unusable: the line keeps the
		// requests in order.
		return t.queue(ctx, key)
	}
	delay, now, err := t.take(ctx, key)
	if err != nil || delay <= 0 {
		return err
	}
	at := now.Add(delay)
	if err := t.clock.Sleep(ctx, delay); err != nil {
		// The caller has gone: its turn goes back to the store, which
		// takes it when no request queued behind it.
		t.giveBack(ctx, key, at, t.clock.Now())
		return err
	}
	return nil
}
