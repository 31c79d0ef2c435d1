package redisstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

func mustAllow(t *testing.T, b *breaker, now time.Time) ticket {
	t.Helper()
	tk, err := b.allow(now)
	if err != nil {
		t.Fatalf("allow = %v, want the call let through", err)
	}
	return tk
}

// TestBreakerCallerDeadlineRules: which ends of a call count as a failure
// of Redis (see WithCircuitBreaker), on a breaker that opens at the first.
func TestBreakerCallerDeadlineRules(t *testing.T) {
	storeTimeout := fmt.Errorf("redisstore: take: no reply from Redis within 1s: %w", context.DeadlineExceeded)
	short, cancel := context.WithTimeout(context.Background(), minDeadlineBudget/5)
	defer cancel()
	fair, cancelFair := context.WithTimeout(context.Background(), time.Hour)
	defer cancelFair()
	cases := []struct {
		name string
		run  func(b *breaker) // ends one call after whatever it needs
		open bool
	}{
		{"caller deadline, no reply meanwhile", func(b *breaker) {
			b.record(context.DeadlineExceeded, t0, mustAllow(t, b, t0))
		}, true},
		{"caller deadline, another call replied meanwhile", func(b *breaker) {
			a := mustAllow(t, b, t0)
			other := mustAllow(t, b, t0)
			b.record(nil, t0, other)
			b.record(context.DeadlineExceeded, t0, a)
		}, false},
		{"caller deadline, a key error replied meanwhile", func(b *breaker) {
			a := mustAllow(t, b, t0)
			other := mustAllow(t, b, t0)
			b.record(fmt.Errorf("redisstore: take: %w", keyErrorForTest()), t0, other)
			b.record(context.DeadlineExceeded, t0, a)
		}, false},
		{"caller deadline, reply only before the call began", func(b *breaker) {
			b.record(nil, t0, mustAllow(t, b, t0))
			b.record(context.DeadlineExceeded, t0, mustAllow(t, b, t0))
		}, true},
		{"caller deadline, reply to a call begun earlier that ended meanwhile", func(b *breaker) {
			earlier := mustAllow(t, b, t0)
			a := mustAllow(t, b, t0)
			b.record(nil, t0, earlier)
			b.record(context.DeadlineExceeded, t0, a)
		}, false},
		{"caller deadline near at the start", func(b *breaker) {
			tk, err := b.allowCtx(t0, short)
			if err != nil {
				t.Fatal(err)
			}
			b.record(context.DeadlineExceeded, t0, tk)
		}, false},
		{"caller deadline far at the start", func(b *breaker) {
			tk, err := b.allowCtx(t0, fair)
			if err != nil {
				t.Fatal(err)
			}
			b.record(context.DeadlineExceeded, t0, tk)
		}, true},
		{"store timeout, another call replied meanwhile", func(b *breaker) {
			a := mustAllow(t, b, t0)
			b.record(nil, t0, mustAllow(t, b, t0))
			b.record(storeTimeout, t0, a)
		}, true},
		{"store timeout near the caller's deadline", func(b *breaker) {
			tk, err := b.allowCtx(t0, short)
			if err != nil {
				t.Fatal(err)
			}
			b.record(storeTimeout, t0, tk)
		}, true},
		{"caller cancelled", func(b *breaker) {
			b.record(context.Canceled, t0, mustAllow(t, b, t0))
		}, false},
		{"store closed", func(b *breaker) {
			b.record(algorithms.ErrClosed, t0, mustAllow(t, b, t0))
		}, false},
		{"connection refused", func(b *breaker) {
			b.record(errors.New("redisstore: take: dial tcp: connection refused"), t0, mustAllow(t, b, t0))
		}, true},
	}
	for _, tc := range cases {
		b := &breaker{threshold: 1, cooldown: time.Minute}
		tc.run(b)
		_, err := b.allow(t0)
		if got := errors.Is(err, ErrCircuitOpen); got != tc.open {
			t.Errorf("%s: circuit open = %v, want %v", tc.name, got, tc.open)
		}
	}
}

// keyErrorForTest returns an error Redis replies about one key's value.
func keyErrorForTest() error {
	return redisError("WRONGTYPE Operation against a key holding the wrong kind of value")
}

type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// TestBreakerProbeEndedByCaller: a half-open probe that its caller ends
// (cancelled, or a deadline that does not count) says nothing of Redis:
// the next call probes at once, and a probe whose caller's deadline does
// count (no reply, a fair budget) opens the circuit for another cooldown.
func TestBreakerProbeEndedByCaller(t *testing.T) {
	b := &breaker{threshold: 1, cooldown: time.Minute}
	b.record(errors.New("redisstore: take: i/o timeout"), t0, mustAllow(t, b, t0))
	if _, err := b.allow(t0); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after a failure, allow = %v, want ErrCircuitOpen", err)
	}
	now := t0.Add(time.Minute)
	probe := mustAllow(t, b, now)
	if _, err := b.allow(now); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("with the probe in flight, allow = %v, want ErrCircuitOpen", err)
	}
	b.record(context.Canceled, now, probe)
	short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	probe, err := b.allowCtx(now, short)
	if err != nil {
		t.Fatalf("after the probe's caller cancelled, allow = %v, want the next probe", err)
	}
	b.record(context.DeadlineExceeded, now, probe)
	probe = mustAllow(t, b, now) // the short deadline did not count either
	b.record(context.DeadlineExceeded, now, probe)
	if _, err := b.allow(now.Add(time.Minute - 1)); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after a probe timed out on its caller's fair deadline, allow = %v, want ErrCircuitOpen for a cooldown", err)
	}
	b.record(nil, now, mustAllow(t, b, now.Add(time.Minute)))
	if _, err := b.allow(now.Add(time.Minute)); err != nil {
		t.Fatalf("after a probe succeeded, allow = %v", err)
	}
}

// TestOwnDeadline: a bare context error leaves the store only when the
// caller's context ended; the breaker reads it so (see record).
func TestOwnDeadline(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		timeout time.Duration
		err     error
		parent  context.Context
		bare    bool
	}{
		{time.Second, context.DeadlineExceeded, live, false},
		{0, context.DeadlineExceeded, live, false},
		{0, context.Canceled, live, false},
		{time.Second, context.DeadlineExceeded, ended, true},
		{0, context.Canceled, ended, true},
	} {
		s := &Store{timeout: tc.timeout}
		got := s.ownDeadline("take", tc.err, tc.parent)
		if !errors.Is(got, tc.err) {
			t.Errorf("ownDeadline(%v, timeout %s, parent ended %v) = %v, want it to wrap %v", tc.err, tc.timeout, tc.parent.Err() != nil, got, tc.err)
		}
		if (got == tc.err) != tc.bare {
			t.Errorf("ownDeadline(%v, timeout %s, parent ended %v) = %v, bare %v, want bare %v", tc.err, tc.timeout, tc.parent.Err() != nil, got, got == tc.err, tc.bare)
		}
	}
}

// TestBreakerOtherCallsUnwindKeepsProbe: a call let through before the
// circuit opened that then ends without an outcome (a panic) says nothing
// of the probe in flight: as WithCircuitBreaker says, one call is let
// through as a probe, so the next call still gets ErrCircuitOpen.
func TestBreakerOtherCallsUnwindKeepsProbe(t *testing.T) {
	b := &breaker{threshold: 1, cooldown: time.Second}
	early := mustAllow(t, b, t0)
	b.record(errors.New("ERR injected failure"), t0, mustAllow(t, b, t0)) // opens
	later := t0.Add(time.Second)
	probe := mustAllow(t, b, later)
	recorded := false
	b.unwound(early, &recorded)
	if _, err := b.allow(later); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("with the probe in flight, after another call unwound: allow = %v, want ErrCircuitOpen", err)
	}
	b.unwound(probe, &recorded)
	mustAllow(t, b, later) // the probe unwound: the next call probes
}
