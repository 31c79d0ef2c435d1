package middleware_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// sliceShared is a SharedObserver of a type that is not comparable.
type sliceShared []*nopObserver

func (s sliceShared) ObserveRequest(e middleware.Event)           { s[0].ObserveRequest(e) }
func (s sliceShared) ObserveState(from, to middleware.State)      {}
func (s sliceShared) ObserveLimit(name string, limit, conf int64) {}
func (s sliceShared) ForMiddleware() middleware.Observer          { return s[0] }

// ptrShared is a SharedObserver of a pointer type.
type ptrShared struct{ nopObserver }

func (s *ptrShared) ForMiddleware() middleware.Observer { return &nopObserver{} }

// TestSharedObserverGivenTwice: a SharedObserver given twice to one New
// is an error naming it (each ForMiddleware would record every request);
// two of one type are not one given twice; one that is not comparable
// cannot be told from another, and passes without a panic.
func TestSharedObserverGivenTwice(t *testing.T) {
	store, _ := newStore(t)
	p := []*policy.Policy{fixed("p", 10, time.Minute, remote)}
	a, b := &ptrShared{}, &ptrShared{}
	if _, err := middleware.New(store, p, middleware.WithObserver(a), middleware.WithObserver(b)); err != nil {
		t.Errorf("two SharedObservers: %v", err)
	}
	_, err := middleware.New(store, p, middleware.WithObserver(a, b, a))
	if err == nil || !strings.Contains(err.Error(), "*middleware_test.ptrShared is given twice") {
		t.Errorf("one SharedObserver given twice: error %v", err)
	}
	s := sliceShared{&nopObserver{}}
	if _, err := middleware.New(store, p, middleware.WithObserver(s), middleware.WithObserver(s)); err != nil {
		t.Errorf("a SharedObserver not comparable: %v", err)
	}
}
