package algotest

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// RefundAt gives back at instant now the leaky_queue places of checks,
// admitted by one Take whose decisions were ds, waited after that Take,
// as [algorithms.Refunder] describes, and returns what Refund reports of
// each check ([algorithms.Refunded]). It is written from the Refunder's
// rule with exact rationals: a place is the last of its queue when its
// departure, next − n·W/L, is at most half a spacing W/(2L) after the
// caller's reckoning now + Delay − waited; next then moves back by n·W/L,
// or to now when less than that is left. The checks are refunded last
// first; then each leaky_queue check reports its queue as a Take of it
// alone at now would without consuming (Delay 0), and each check of
// another kind its decision in ds. A denied Take gives nothing back.
//
// The errors are Refund's: decisions and checks of different lengths, a
// negative waited, an invalid leaky_queue check, or leaky_queue checks of
// one key that no Take admits together (then nothing is given back).
func (m *Model) RefundAt(now time.Time, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) ([]algorithms.Refunded, error) {
	if len(ds) != len(checks) {
		return nil, fmt.Errorf("algotest: Refund: %d decisions for %d checks", len(ds), len(checks))
	}
	if waited < 0 {
		return nil, fmt.Errorf("algotest: Refund: waited must not be negative, got %s", waited)
	}
	var queues []algorithms.Check
	for _, c := range checks {
		if c.Spec.Algorithm == algorithms.LeakyQueue {
			queues = append(queues, c)
		}
	}
	if err := validate(queues); err != nil {
		return nil, err
	}
	admitted := true
	for _, d := range ds {
		admitted = admitted && d.Allowed
	}
	t := now.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]algorithms.Refunded, len(checks))
	for i := len(checks) - 1; i >= 0 && admitted; i-- {
		c := checks[i]
		if c.Spec.Algorithm != algorithms.LeakyQueue {
			continue
		}
		mc, ok := m.keys[modelKey{c.Spec, c.Key}]
		if !ok {
			continue // never held: nothing to give back
		}
		q := mc.(*leakyQueue)
		if q.next == nil || q.next.Cmp(ratInt(t)) <= 0 {
			continue // the queue is empty
		}
		place := new(big.Rat).Quo(ratInt(cost(c)), q.rate) // n·W/L
		// The caller's reckoning of the departure: t + Delay − waited,
		// exactly (no int64 to overflow).
		rem := new(big.Int).Sub(big.NewInt(int64(ds[i].Delay)), big.NewInt(int64(waited)))
		reckon := new(big.Rat).Add(ratInt(t), new(big.Rat).SetInt(rem))
		half := new(big.Rat).Quo(frac(1, 2), q.rate) // W/(2L)
		departure := sub(q.next, place)
		if departure.Cmp(new(big.Rat).Add(reckon, half)) > 0 {
			continue // a later request queued behind it: kept
		}
		if departure.Cmp(ratInt(t)) <= 0 {
			q.next = ratInt(t) // what is left of the place is all the queue held
		} else {
			q.next = departure
		}
		out[i].Given = true
	}
	for i, c := range checks {
		if c.Spec.Algorithm != algorithms.LeakyQueue {
			out[i].Decision = ds[i]
			continue
		}
		d := decideLate(c.Spec, m.machineFor(modelKey{c.Spec, c.Key}).clone(), t, cost(c), false)
		d.Delay = 0
		out[i].Decision = d
	}
	return out, nil
}

// Refund implements algorithms.Refunder on the model: RefundAt at the
// clock's instant, written into dst.
func (s modelStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if len(dst) != len(checks) {
		return fmt.Errorf("algotest: Refund: %d results for %d checks", len(dst), len(checks))
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	out, err := s.m.RefundAt(s.clock.Now(), checks, ds, waited)
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}
