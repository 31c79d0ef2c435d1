package policy_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/nested"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nest holds the operations of a Result that decide a policy nested in
// another middleware, which package policy keeps off its API and hands
// to package middleware (and these tests) through internal/nested.
var nest = nested.Of[*policy.Result]()

// dropGuards drops every guard (policy.Policy.Guards) of the policies of
// mask from the store calls of res: nest.DropGuard for each k.
func dropGuards(res *policy.Result, mask uint64) {
	for k := range policy.MaxGuards {
		nest.DropGuard(res, mask, k)
	}
}

// resultAPI lists the exported methods of *policy.Result: what reads a
// decision (a handler downstream of the middleware, a deny handler) and
// what drives a Set without the middleware (Take, Peek, Refund, GiveBack,
// Reset). A method added to Result must be added here: a user may call it
// on the Result of a request a middleware is deciding.
var resultAPI = []string{
	"AboveLimit", "Allowed", "Cost", "Decision", "Delay", "GaveBack",
	"GiveBack", "Given", "Key", "Len", "Lowest", "Mask", "Peek", "Peeked",
	"Policy", "Refund", "Refunded", "Reset", "RetryAfter", "Set",
	"SkippedMask", "Take", "Taken",
}

// nestedOps returns the names of the operations of nested.Ops (DropGuard,
// MergeOwn, Folded...), and DropGuards, which the loop of dropGuards
// replaced.
func nestedOps(t *testing.T) []string {
	t.Helper()
	typ := reflect.TypeFor[nested.Ops[*policy.Result]]()
	names := []string{"DropGuards"}
	for f := range typ.Fields() {
		names = append(names, f.Name)
	}
	if len(names) < 7 {
		t.Fatalf("nested.Ops has %d operations (%v): want 6 at least", len(names)-1, names[1:])
	}
	return names
}

// TestResultAPIHasNoNestedOps: the operations that package middleware
// uses to decide a policy nested in another middleware (leave out the
// checks a middleware further out counted, merge its decisions in, match
// their states) are not methods of *policy.Result, where a handler
// holding the Result of the running request (middleware.FromContext)
// could call them and change what the middleware counted and reports;
// and the exported methods are those of resultAPI, no more.
func TestResultAPIHasNoNestedOps(t *testing.T) {
	typ := reflect.TypeFor[*policy.Result]()
	var got []string
	for m := range typ.Methods() {
		got = append(got, m.Name)
	}
	for _, name := range nestedOps(t) {
		if slices.Contains(got, name) {
			t.Errorf("*policy.Result has the exported method %s: an operation of the nested-middleware machinery (internal/nested), which a handler must not call on the request's Result", name)
		}
	}
	for _, name := range got {
		if !slices.Contains(resultAPI, name) {
			t.Errorf("*policy.Result has the exported method %s, not in resultAPI: add it there if a user needs it on the Result of a request a middleware decided, else keep it unexported (see internal/nested)", name)
		}
	}
	for _, name := range resultAPI {
		if !slices.Contains(got, name) {
			t.Errorf("*policy.Result lacks the method %s of resultAPI", name)
		}
	}
}

// TestNestedOpsSet: package policy hands every operation of nested.Ops
// over when it is initialised (a nil one would panic in package
// middleware, on a nested request only).
func TestNestedOpsSet(t *testing.T) {
	v := reflect.ValueOf(nest)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Errorf("nested.Ops.%s is nil after package policy's init", v.Type().Field(i).Name)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("nested.Of[*policy.Set]() did not panic: only *policy.Result has the operations")
			}
		}()
		nested.Of[*policy.Set]()
	}()
}
