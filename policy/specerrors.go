package policy

import "github.com/ratekeeper/ratekeeper/algorithms"

// specRefused says which fields of a Spec were refused before it is
// judged (the config loader reported them, and read them as 0, or kept
// buckets out of range): their problems are not reported again, and
// nothing is judged against them.
type specRefused struct {
	limit, window, buckets bool
	// algorithm: the algorithm is not known (refused, or perhaps
	// misspelt), and burst, buckets and max_delay are not judged.
	algorithm bool
}

// specErrors returns the problems of s, each the *algorithms.SpecError
// [algorithms.Spec.Validate] reports, in its order: every problem that
// does not depend on another one reported (Validate judges nothing
// against a value it refuses), except those of the fields refused. A
// refused limit, window or algorithm stands in as a value Validate
// refuses too (0, or no algorithm), so that nothing is judged against
// it; nothing is judged against buckets.
func specErrors(s algorithms.Spec, refused specRefused) []error {
	if refused.limit {
		s.Limit = 0
	}
	if refused.window {
		s.Window = 0
	}
	if refused.algorithm {
		s.Algorithm = ""
	}
	var errs []error
	for _, err := range appendErrors(nil, s.Validate()) {
		if se, ok := err.(*algorithms.SpecError); ok && refused.has(se.Field) {
			continue // reported already
		}
		errs = append(errs, err)
	}
	return errs
}

// has reports whether the Spec field named field was refused.
func (r specRefused) has(field string) bool {
	switch field {
	case "Algorithm":
		return r.algorithm
	case "Limit":
		return r.limit
	case "Window":
		return r.window
	case "Buckets":
		return r.buckets
	}
	return false
}
