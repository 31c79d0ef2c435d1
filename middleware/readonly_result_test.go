package middleware_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// resultReaders are the methods of *policy.Result that only read it, and
// that *middleware.Result offers with the same meaning. Every other
// exported method of *policy.Result changes it (Take, Peek, Refund,
// GiveBack, Reset, and any added later until it is listed here).
var resultReaders = []string{
	"AboveLimit", "Allowed", "Cost", "Decision", "Delay", "GaveBack", "Given",
	"Key", "Len", "Lowest", "Mask", "Peeked", "Policy", "Refunded",
	"RetryAfter", "Set", "SkippedMask", "Taken",
}

// TestResultReadOnly: the Result a handler gets from FromContext (and a
// deny hook, the shadow report, the reject hook and the observers are
// handed) only reads the decision the middleware made. It has none of
// the methods of policy.Result that change it (called on the running
// request's Result, they would count the request again, or give back or
// refund what the middleware is to give back, and change the headers and
// what the observers see), no field a handler could write, and no method
// handing out the policy.Result itself; it has every reader.
func TestResultReadOnly(t *testing.T) {
	mw := reflect.TypeFor[*middleware.Result]()
	pr := reflect.TypeFor[*policy.Result]()
	var mutators []string
	for m := range pr.Methods() {
		if !slices.Contains(resultReaders, m.Name) {
			mutators = append(mutators, m.Name)
		}
	}
	for _, name := range []string{"Take", "Peek", "Refund", "GiveBack", "Reset"} {
		if !slices.Contains(mutators, name) {
			t.Errorf("*policy.Result has no method %s that changes it, or it is listed as a reader", name)
		}
	}
	for _, name := range mutators {
		if _, ok := mw.MethodByName(name); ok {
			t.Errorf("*middleware.Result has the method %s, which changes the policy.Result of the decided request", name)
		}
	}
	for _, name := range resultReaders {
		m, ok := mw.MethodByName(name)
		if !ok {
			t.Errorf("*middleware.Result lacks the reader %s", name)
			continue
		}
		p, _ := pr.MethodByName(name)
		// Same parameters and results, the receiver aside.
		if got, want := m.Type.String(), p.Type.String(); got[len("func(*middleware.Result"):] != want[len("func(*policy.Result"):] {
			t.Errorf("(*middleware.Result).%s is %s, want the signature of %s", name, got, want)
		}
	}
	for m := range mw.Methods() {
		for out := range m.Type.Outs() {
			if out == pr || out == pr.Elem() {
				t.Errorf("(*middleware.Result).%s returns a %v, whose methods change it", m.Name, out)
			}
		}
	}
	for f := range mw.Elem().Fields() {
		if f.IsExported() {
			t.Errorf("middleware.Result has the exported field %s (%v): a handler could write it", f.Name, f.Type)
		}
	}
	for name, want := range map[string]reflect.Type{
		"Shadow":      reflect.TypeFor[func(*middleware.Result) bool](),
		"Fallback":    reflect.TypeFor[func(*middleware.Result) bool](),
		"StoreFailed": reflect.TypeFor[func(*middleware.Result) bool](),
		"Err":         reflect.TypeFor[func(*middleware.Result) error](),
	} {
		if m, ok := mw.MethodByName(name); !ok || m.Type != want {
			t.Errorf("*middleware.Result lacks the method %s of type %v", name, want)
		}
	}
	if t.Failed() {
		t.Logf("*middleware.Result's methods: %v", methodNames(mw))
	}
}

// methodNames returns the names of the exported methods of typ.
func methodNames(typ reflect.Type) []string {
	var names []string
	for m := range typ.Methods() {
		names = append(names, m.Name)
	}
	return names
}
