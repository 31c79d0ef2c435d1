// Package nilness tells a nil interface value from one that holds a value
// of no use: a nil pointer or a nil function. A constructor given an
// interface (a store, a clock, an observer) checks with [Is], since a
// variable of a pointer type never assigned, passed as the interface, is
// not equal to nil, and would panic only later, at its first method call.
package nilness

import "reflect"

// Is reports whether v is nil or holds a nil pointer or a nil function.
// A nil map, slice or channel is not reported: a method on one can work.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
