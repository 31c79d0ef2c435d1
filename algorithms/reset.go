package algorithms

import (
	"context"
	"errors"
	"fmt"
)

var _ Resetter = (*MemoryStore)(nil)

// Reset implements [Resetter]: it forgets each check's key under the
// check's Spec (its Cost and Limit are ignored), so that the key's next Take finds it
// as a key never seen. Every Spec is validated first: an invalid one is
// an error (a *SpecError) and nothing is reset. A key the store does not
// hold is no error. Each key is forgotten under its shard's lock, one
// shard after another: a Take between two of them sees the first reset and
// not the second. A forgotten key leaves no trace: its slot is given back
// (the table's order kept, with no tombstone), the shard counts one key
// fewer towards [WithMaxKeys], and a Spec left without keys has its storage
// dropped at the shard's next compaction, as after a sweep.
func (s *MemoryStore) Reset(ctx context.Context, checks ...Check) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	for i := range checks {
		if err := checks[i].Spec.Validate(); err != nil {
			return err
		}
	}
	for i := range checks {
		c := &checks[i]
		h := s.hash(c.Key)
		sh := &s.shards[h&s.mask]
		if sh.lookup(&c.Spec) == nil {
			continue // the shard holds no key of this Spec
		}
		sh.mu.Lock()
		// Under the lock the published list is the shard's tables; a table
		// found above may have been dropped since.
		if tb := sh.lookupList(&c.Spec); tb != nil && tb.forget(h) {
			sh.keys--
			if tb.empty() {
				sh.compactDue = true
			}
		}
		sh.mu.Unlock()
	}
	return nil
}

// forget deletes the key of hash h from tb and reports whether tb held
// it. The shard's lock must be held.
func (tb *table) forget(h uint64) bool {
	i, held := tb.slots().find(h)
	if held {
		tb.removeAt(i)
		tb.shrink()
	}
	return held
}

// Reset forgets the state of key under l's Spec: its next AllowN finds it
// with its whole allowance (see [Resetter]). A key the store does not hold
// is no error. With a store that is not a Resetter it returns an error
// matching errors.ErrUnsupported, and changes nothing.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	r, ok := l.store.(Resetter)
	if !ok {
		return fmt.Errorf("algorithms: Limiter.Reset: the store (%T) cannot forget keys, it is not an algorithms.Resetter: %w", l.store, errors.ErrUnsupported)
	}
	return r.Reset(ctx, Check{Spec: l.spec, Key: key})
}
