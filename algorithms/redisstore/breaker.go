package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// WithCircuitBreaker stops sending to a failing Redis: after failures
// consecutive failed calls, every call returns [ErrCircuitOpen] at once for
// cooldown; then one call is let through as a probe, and its success closes
// the circuit (its failure opens it for another cooldown). A call the
// caller cancelled (context.Canceled) is not counted as a failure, and an
// error Redis replied about one key's value (of another type, or not
// written by the store: see Failures in the package doc) counts as the
// reply it is, Redis being up: one bad key does not open the circuit for
// every client. The
// breaker reads the injected clock when there is one ([WithClock]).
func WithCircuitBreaker(failures int, cooldown time.Duration) Option {
	return func(s *Store) error {
		if failures < 1 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Failures must be at least 1, got %d", failures)
		}
		if cooldown <= 0 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Cooldown must be positive, got %s", cooldown)
		}
		s.breaker = &breaker{threshold: failures, cooldown: cooldown}
		return nil
	}
}

// breaker is a consecutive-failure circuit breaker.
type breaker struct {
	mu        sync.Mutex
	threshold int
	cooldown  time.Duration
	failures  int       // consecutive failures while closed
	open      bool      // open or half-open
	until     time.Time // open: when the next probe may go
	probing   bool      // half-open: a probe is in flight
	probe     uint64    // the number of the last probe let through
}

// allow returns ErrCircuitOpen when the call must not go to Redis. A call
// let through as the half-open probe gets its number, which record takes
// back (0 for any other call).
func (b *breaker) allow(now time.Time) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return 0, nil
	}
	if now.Before(b.until) || b.probing {
		return 0, ErrCircuitOpen
	}
	b.probing = true // this call is the probe
	b.probe++
	return b.probe, nil
}

// record counts the outcome of a call that allow let through, probe being
// the number allow gave it. While the circuit is open only the probe's
// failure counts: a call let through before the circuit opened that fails
// now says nothing new, and must not end the probe still in flight (which
// would let a second one through).
func (b *breaker) record(err error, now time.Time, probe uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	isProbe := probe != 0 && probe == b.probe && b.probing
	if errors.Is(err, context.Canceled) {
		if isProbe {
			b.probing = false
		}
		return
	}
	if err == nil || keyError(err) {
		b.failures, b.open, b.probing = 0, false, false
		return
	}
	if b.open {
		if isProbe {
			b.probing = false
			b.until = now.Add(b.cooldown)
		}
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.open, b.until, b.probing = true, now.Add(b.cooldown), false
	}
}

// foreignMark is in the error the store's scripts raise on a value they did
// not write (lua/fastlib.lua); a key cannot spell it, its spaces escaped.
const foreignMark = " holds a value the store did not write"

// keyError reports whether err is an error Redis replied about the value
// of one key: WRONGTYPE, or a value the store did not write. Redis
// answered; the key is at fault, not the server.
func keyError(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "WRONGTYPE") || strings.Contains(msg, foreignMark)
}
