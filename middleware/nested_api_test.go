package middleware_test

import (
	"reflect"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/nested"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResultHasNoNestedOps: the Result a handler reads from FromContext
// (or a deny handler, or the shadow report, is handed) has none of the
// operations that decide a policy nested in another middleware
// (nested.Ops, and DropGuards, once their loop): called on the running
// request's Result, they would change what the middleware counted, merged
// and reports. Neither through the policy.Result it holds nor of its own.
// (Nor has it the methods of policy.Result that change it: see
// TestResultReadOnly.)
func TestResultHasNoNestedOps(t *testing.T) {
	ops := reflect.TypeFor[nested.Ops[*policy.Result]]()
	names := []string{"DropGuards"}
	for f := range ops.Fields() {
		names = append(names, f.Name)
	}
	if len(names) < 7 {
		t.Fatalf("nested.Ops has %d operations (%v): want 6 at least", len(names)-1, names[1:])
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*middleware.Result](), reflect.TypeFor[middleware.Result]()} {
		for _, name := range names {
			if _, ok := typ.MethodByName(name); ok {
				t.Errorf("%v has the exported method %s: an operation of the nested-middleware machinery (internal/nested), which a handler must not call on the request's Result", typ, name)
			}
		}
	}
	// The features a handler or a hook may use stay.
	for _, name := range []string{"Decision", "Allowed", "RetryAfter", "StoreFailed", "Given", "GaveBack", "Policy", "Key"} {
		if _, ok := reflect.TypeFor[*middleware.Result]().MethodByName(name); !ok {
			t.Errorf("*middleware.Result lacks the method %s", name)
		}
	}
}
