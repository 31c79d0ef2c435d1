package middleware_test

import (
	"sync/atomic"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// nopObserver observes nothing, cheaply (a copy of the middleware tests'
// helper, which this module cannot import).
type nopObserver struct{ n atomic.Int64 }

func (o *nopObserver) ObserveRequest(e middleware.Event)           { o.n.Add(1) }
func (o *nopObserver) ObserveState(from, to middleware.State)      {}
func (o *nopObserver) ObserveLimit(name string, limit, conf int64) {}
