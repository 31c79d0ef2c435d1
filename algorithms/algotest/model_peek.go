package algotest

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// PeekAt returns what a Take of each check alone at instant now would
// decide, as [algorithms.Peeker.Peek] describes, and changes nothing: each
// check is decided without consuming on a copy of its key's state (a key
// never seen is fresh), at its effective instant, with a leaky_queue's
// Delay the wait its request would have. It returns the first validation
// error, as [Model.TakeAt] does: Peek decides each check alone, but checks
// of one key that no Take admits together are its error too.
func (m *Model) PeekAt(now time.Time, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if err := validate(checks); err != nil {
		return nil, err
	}
	t := now.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]algorithms.Decision, len(checks))
	for i, c := range checks {
		mc := m.machineFor(modelKey{c.Spec, c.Key}).clone()
		out[i] = decideLate(c.Judged(), mc, t, cost(c), false)
	}
	return out, nil
}

// Peek implements algorithms.Peeker on the model: PeekAt at the clock's
// instant, written into dst.
func (s modelStore) Peek(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	if len(dst) != len(checks) {
		return fmt.Errorf("algotest: Peek: %d decisions for %d checks", len(dst), len(checks))
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	out, err := s.m.PeekAt(s.clock.Now(), checks...)
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}
