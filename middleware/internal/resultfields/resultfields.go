// Package resultfields gives the packages under middleware what package
// middleware gives no one else: the fields of a middleware.Result, to
// write. A middleware.Result is read-only outside package middleware (a
// handler must not change the decision the middleware acts on); the
// tests of package metricset, which counts the Results of the metrics
// adapters' Events, need to make Results as the middleware makes them
// (prepared and taken by a store, failed, decided by the fallback store)
// without running a middleware.
//
// This package cannot name middleware.Result (middleware imports it),
// hence the type parameter: package middleware sets the Fields of
// *middleware.Result when it is initialised, and the caller of Of names
// that type.
package resultfields

import (
	"fmt"

	"github.com/ratekeeper/ratekeeper/policy"
)

// Fields returns the fields of res, a *middleware.Result, to write: the
// policy.Result it reports (prepare it with policy.Set.Prepare, then Take
// it), whether the fallback store decided (middleware.Result.Fallback),
// and the failure met (middleware.Result.Err).
type Fields[R any] func(res R) (pr *policy.Result, fallback *bool, err *error)

// fields holds the Fields that Set was given.
var fields any

// Set makes f the Fields that Of returns. Package middleware calls it when
// it is initialised, with R *middleware.Result.
func Set[R any](f Fields[R]) { fields = f }

// Of returns the Fields of R that Set was given. Call it with R
// *middleware.Result, once package middleware is initialised; it panics
// for any other R, or before.
func Of[R any]() Fields[R] {
	f, ok := fields.(Fields[R])
	if !ok {
		panic(fmt.Sprintf("resultfields: Of[%T]: package middleware set %T", *new(R), fields))
	}
	return f
}
