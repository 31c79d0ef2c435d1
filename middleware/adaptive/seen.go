package adaptive

import (
	"sync/atomic"

	"github.com/ratekeeper/ratekeeper/policy"
)

// seen is what a Controller or a Fleet last knew of its target's rules:
// the rule set, and the configured policies it drives. A new rule set with
// the same configured policies holds only limits set by others (SetLimit
// keeps the configured policies); new configured policies mean a reload,
// which carried the limits of the policies whose Spec changed over only in
// proportion, and set none for new ones.
type seen struct {
	set   atomic.Pointer[policy.Set] // read without the owner's lock
	names []string                   // the names driven (nil: all); requires the owner's lock
	conf  map[string]*policy.Policy  // configured policy by name; requires the owner's lock
}

// moved reports whether t's rule set is another than the one seen: a
// reload, or a limit set. It is one atomic load.
func (s *seen) moved(t Target) bool { return t.Set() != s.set.Load() }

// start records t's rules as the owner starts setting its limits, and
// returns the names it drives (names, or all of t's policies when empty)
// with their configured policies, nil for a name t no longer has. The rule
// set recorded is the one before the owner's own limits: if a reload swaps
// it meanwhile, the next check sees it.
func (s *seen) start(t Target, names []string) ([]string, map[string]*policy.Policy) {
	s.set.Store(t.Set())
	s.names = names
	all, conf := s.configured(t)
	s.conf = conf
	return all, conf
}

func (s *seen) configured(t Target) ([]string, map[string]*policy.Policy) {
	names := s.names
	if len(names) == 0 {
		for _, p := range t.Set().Policies() {
			names = append(names, p.Name())
		}
	}
	conf := make(map[string]*policy.Policy, len(names))
	for _, name := range names {
		conf[name] = t.Configured(name)
	}
	return names, conf
}

// reloaded reports whether the configured policies of t differ from the
// ones seen at start (then the owner must set its limits again); if not,
// the current rule set is taken as seen. It requires the owner's lock.
func (s *seen) reloaded(t Target) bool {
	set := t.Set()
	_, now := s.configured(t)
	if len(now) != len(s.conf) {
		return true
	}
	for name, p := range now {
		if q, ok := s.conf[name]; !ok || q != p {
			return true
		}
	}
	s.set.Store(set)
	return false
}

// settle calls set, which sets the owner's limits from the configured
// policies [seen.start] returns, and calls it again while a reload has
// replaced them meanwhile (at most three times more; a later check sees
// any reload after that): a reload between the reading of a configured
// policy and the SetLimit made from it would otherwise leave the new
// policy at a limit computed from the old one (8 for a reload from 10 to
// 100 at level 0.8; 80 for one from 100 to 10, above the new configured
// limit) until the owner's next check. It returns the error of set's last
// call. It requires the owner's lock.
func (s *seen) settle(t Target, set func() error) error {
	err := set()
	for i := 0; i < 3 && s.reloaded(t); i++ {
		err = set()
	}
	return err
}
