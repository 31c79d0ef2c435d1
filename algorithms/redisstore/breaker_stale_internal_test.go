package redisstore

import (
	"errors"
	"testing"
	"time"
)

// TestBreakerStaleFailureAfterRecovery: a call let through before the
// circuit opened that fails only after the probe closed it again (its
// outage outlasted the cooldown: a store timeout longer than the cooldown,
// or go-redis still redialing with backoff) says nothing new of Redis,
// which the probe showed answering: it must not open the circuit again for
// another cooldown. A call let through since the recovery that fails
// still counts. Times as a real clock reads them: record gets the instant
// the call ended.
func TestBreakerStaleFailureAfterRecovery(t *testing.T) {
	refused := errors.New("redisstore: take: dial tcp: connection refused")
	b := &breaker{threshold: 1, cooldown: time.Second}
	stale := mustAllow(t, b, t0)
	b.record(refused, t0, mustAllow(t, b, t0)) // opens
	recovered := t0.Add(time.Second)
	b.record(nil, recovered, mustAllow(t, b, recovered)) // the probe closes it
	b.record(refused, recovered.Add(time.Millisecond), stale)
	if _, err := b.allow(recovered.Add(2 * time.Millisecond)); err != nil {
		t.Fatalf("after the probe closed the circuit, a call let through before it opened failed: allow = %v, want the call let through", err)
	}
	b.record(refused, recovered.Add(3*time.Millisecond), mustAllow(t, b, recovered.Add(2*time.Millisecond)))
	if _, err := b.allow(recovered.Add(4 * time.Millisecond)); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after a call let through since the recovery failed: allow = %v, want ErrCircuitOpen", err)
	}
}
