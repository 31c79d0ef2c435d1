package algotest

import (
	"context"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Reset forgets each check's key under the check's Spec (its Cost is
// ignored), as [algorithms.Resetter] says: the key's next Take finds it as
// a key never seen. It returns the first invalid Spec's error (from
// Spec.Validate) and then forgets nothing.
func (m *Model) Reset(checks ...algorithms.Check) error {
	for _, c := range checks {
		if err := c.Spec.Validate(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range checks {
		delete(m.keys, modelKey{c.Spec, c.Key})
	}
	return nil
}

// Reset implements algorithms.Resetter on the model.
func (s modelStore) Reset(ctx context.Context, checks ...algorithms.Check) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.m.Reset(checks...)
}
