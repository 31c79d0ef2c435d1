package policy

import (
	"errors"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// specRefused says which fields of a Spec were refused before it is
// judged (the config loader read them as 0): a default stands in for
// each, and nothing is judged against it.
type specRefused struct {
	limit, window, buckets bool
	// algorithm: the algorithm is not known (refused, or perhaps
	// misspelt), and burst, buckets and max_delay are not judged.
	algorithm bool
}

// specErrors returns the problems of s, every one that can be judged, in
// the order [algorithms.Spec.Validate] judges its fields; each is the
// *algorithms.SpecError Validate returns. The algorithm, limit and window
// are judged each alone. Then burst, buckets and max_delay are judged
// against the limit and window when both are valid, each after the
// problems of the others were found (a default standing in for them);
// otherwise each alone, against a limit and window that only its own
// bounds, or its algorithm, can refuse (whether buckets divide the window
// is judged once the window is valid): a value refused only because
// another one is, a burst that takes too long to refill at a limit of 0,
// is no problem of its own. The three are judged only when the algorithm
// is known.
func specErrors(s algorithms.Spec, refused specRefused) []error {
	var errs []error
	// add appends err and returns the field it names ("" for an error
	// that names none, which ends the judging).
	add := func(err error) string {
		errs = append(errs, err)
		var se *algorithms.SpecError
		if !errors.As(err, &se) {
			return ""
		}
		return se.Field
	}
	sb := func(spec algorithms.Spec) algorithms.Spec {
		if spec.Algorithm == algorithms.SlidingBuckets && spec.Buckets == 0 {
			spec.Buckets = 1 // a stand-in that divides every window
		}
		return spec
	}
	core := sb(algorithms.Spec{Algorithm: s.Algorithm, Limit: s.Limit, Window: s.Window})
	coreOK := true
	algoKnown := !refused.algorithm
	if refused.limit {
		core.Limit, coreOK = 1, false
	}
	if refused.window {
		core.Window, coreOK = time.Second, false
	}
	for range 3 {
		err := core.Validate()
		if err == nil {
			break
		}
		coreOK = false
		switch add(err) {
		case "Limit":
			core.Limit = 1
		case "Window":
			core.Window = time.Second
		case "Algorithm": // limit and window are judged under the default
			core.Algorithm, core.Buckets, algoKnown = DefaultAlgorithm, 0, false
		default:
			return errs
		}
	}
	if !algoKnown {
		return errs
	}
	// A burst or max_delay the loader refused was read as 0; buckets it
	// refused (out of range) were kept, and are replaced.
	standIn := 0 // buckets that no algorithm refuses
	if s.Algorithm == algorithms.SlidingBuckets {
		standIn = 1
	}
	if refused.buckets {
		s.Buckets = standIn
	}
	if coreOK {
		for range 3 {
			err := s.Validate()
			if err == nil {
				break
			}
			switch add(err) {
			case "Burst":
				s.Burst = 0
			case "Buckets":
				s.Buckets = standIn
			case "MaxDelay":
				s.MaxDelay = 0
			default:
				return errs
			}
		}
		return errs
	}
	// A limit of MaxLimit refills any valid burst within a second; a
	// window of b milliseconds is one that b buckets divide; a limit of 1
	// per MaxWindow queues one request for any valid max_delay.
	alone := []algorithms.Spec{
		sb(algorithms.Spec{Algorithm: s.Algorithm, Limit: algorithms.MaxLimit, Window: time.Second, Burst: s.Burst}),
		{Algorithm: s.Algorithm, Limit: 1, Window: time.Duration(max(s.Buckets, 1)) * time.Millisecond, Buckets: s.Buckets},
		sb(algorithms.Spec{Algorithm: s.Algorithm, Limit: 1, Window: algorithms.MaxWindow, MaxDelay: s.MaxDelay}),
	}
	for _, spec := range alone {
		if err := spec.Validate(); err != nil {
			add(err)
		}
	}
	return errs
}
