package policy_test

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A policy built from a form of the program's own: every problem of it,
// each shown at the form's field.
func ExampleErrors() {
	form := map[string]string{"Name": "name", "Spec.Limit": "limit", "Spec.Burst": "burst"}
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 0, Window: time.Minute, Burst: -5}
	_, err := policy.New("per user", spec, keyfunc.User())
	for _, e := range policy.Errors(err) {
		fmt.Printf("%s: %s\n", form[e.Field], e.Reason)
	}
	// Output:
	// name: "per user" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'
	// limit: must be positive, got 0
	// burst: must be at least 1 (or 0 for Limit), got -5
}
