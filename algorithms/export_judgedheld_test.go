package algorithms

import "context"

// TakeJudgedSteps decides c, a check judged at a limit of its own
// ([Check.Limit]), as TakeOne did before it decided held keys in place
// (f1274d6): through takeJudged, the steps of a Take of several checks,
// for a held key as for a new one. A differential test compares TakeOne
// with it.
func TakeJudgedSteps(ctx context.Context, s *MemoryStore, c Check) (Decision, error) {
	if err := s.ready(ctx); err != nil {
		return Decision{}, err
	}
	t := s.now()
	h := s.hash(c.Key)
	return s.takeJudged(&s.shards[h&s.mask], &c, h, t)
}

// TakeIntoSteps is TakeInto for a Take of several checks as decideMany
// decides it, one check at a time, never through takeHeld's decision in
// place of held keys. A differential test compares TakeInto with it.
func TakeIntoSteps(ctx context.Context, s *MemoryStore, dst []Decision, checks []Check) error {
	if len(checks) < 2 {
		return s.TakeInto(ctx, dst, checks)
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.takeMany(dst, checks, s.now(), false)
}

// ShareSeed gives dst the hash seed of src, so that the two stores put each
// key in the same shard and slot, and sample the same keys to evict. dst
// must hold no key yet.
func ShareSeed(dst, src *MemoryStore) { dst.seed = src.seed }
