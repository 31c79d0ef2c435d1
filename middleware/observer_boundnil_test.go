package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestBoundToANilSharedIsBoundToNone: a BoundObserver whose BoundTo
// returns a nil pointer of a SharedObserver type (a typed nil in the
// interface) is bound to none, as one returning nil: two of them, two
// observers, are accepted, and neither is taken for the other's
// SharedObserver's observer.
func TestBoundToANilSharedIsBoundToNone(t *testing.T) {
	store, _ := newStore(t)
	var none *ptrShared
	_, err := middleware.New(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)},
		middleware.WithObserver(&boundTo{s: none}, &boundTo{s: none}))
	if err != nil {
		t.Errorf("New with two observers bound to a nil *ptrShared: %v, want no error (bound to none)", err)
	}
}
