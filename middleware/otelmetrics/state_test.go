package otelmetrics_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stateLine returns the failure_state gauges as "healthy=1 open=0 ...".
func stateLine(t *testing.T, points map[string]int64) string {
	t.Helper()
	s := ""
	for _, st := range middleware.States {
		v, ok := points["ratekeeper.failure_state{state="+st.String()+"}"]
		if !ok {
			t.Fatalf("no failure_state for %s", st)
		}
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", st, v)
	}
	return s
}

// TestFailureStateTransitions: with a failing store, the failure_state
// gauge follows the middleware into its failure mode (open, closed,
// fallback) and back to healthy when the store answers again.
func TestFailureStateTransitions(t *testing.T) {
	for _, tc := range []struct {
		failure func(t *testing.T) middleware.Failure
		want    string
	}{
		{func(*testing.T) middleware.Failure { return middleware.FailOpen() }, "healthy=0 open=1 closed=0 fallback=0"},
		{func(*testing.T) middleware.Failure { return middleware.FailClosed(0) }, "healthy=0 open=0 closed=1 fallback=0"},
		{func(t *testing.T) middleware.Failure { return middleware.FallBack(memStore(t)) }, "healthy=0 open=0 closed=0 fallback=1"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			obs, reader := newObserver(t)
			f := tc.failure(t)
			store := &switchable{Store: memStore(t)}
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, user)},
				middleware.WithObserver(obs), middleware.OnStoreError(f), middleware.WithBreaker(0, 0))
			metrictest.KeepAlive(t, m)
			h := router(m)
			points, _ := collect(t, reader)
			if got, want := stateLine(t, points), "healthy=1 open=0 closed=0 fallback=0"; got != want {
				t.Errorf("at start: %s, want %s", got, want)
			}
			store.down.Store(true)
			get(h, "/", "X-User", "ann")
			points, _ = collect(t, reader)
			if got := stateLine(t, points); got != tc.want {
				t.Errorf("store down: %s, want %s", got, tc.want)
			}
			store.down.Store(false)
			if code := get(h, "/", "X-User", "ann"); code != http.StatusOK {
				t.Fatalf("store back: %d", code)
			}
			points, _ = collect(t, reader)
			if got, want := stateLine(t, points), "healthy=1 open=0 closed=0 fallback=0"; got != want {
				t.Errorf("store back: %s, want %s", got, want)
			}
		})
	}
}

// TestFailureStateSharedObserver: one Observer for two middlewares with
// different failure modes. While one fails closed, the other's recovery
// does not report healthy.
func TestFailureStateSharedObserver(t *testing.T) {
	obs, reader := newObserver(t)
	newFailing := func(f middleware.Failure) (*switchable, http.Handler) {
		store := &switchable{Store: memStore(t)}
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, user)},
			middleware.WithObserver(obs), middleware.OnStoreError(f), middleware.WithBreaker(0, 0))
		metrictest.KeepAlive(t, m)
		return store, router(m)
	}
	openStore, open := newFailing(middleware.FailOpen())
	closedStore, closed := newFailing(middleware.FailClosed(0))
	state := func() string {
		points, _ := collect(t, reader)
		return stateLine(t, points)
	}
	openStore.down.Store(true)
	closedStore.down.Store(true)
	get(open, "/", "X-User", "ann")
	get(closed, "/", "X-User", "ann")
	if got, want := state(), "healthy=0 open=1 closed=1 fallback=0"; got != want {
		t.Errorf("both failing: %s, want %s", got, want)
	}
	openStore.down.Store(false)
	get(open, "/", "X-User", "ann")
	if got, want := state(), "healthy=0 open=0 closed=1 fallback=0"; got != want {
		t.Errorf("one recovered, one failing closed: %s, want %s", got, want)
	}
	closedStore.down.Store(false)
	get(closed, "/", "X-User", "ann")
	if got, want := state(), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("both recovered: %s, want %s", got, want)
	}
}

// TestFailureStateObservedOutOfOrder: two transitions (healthy -> open,
// then open -> healthy) told in reverse, as an observer may be told them
// by what stands between it and the middleware (which reports them in
// order, under its state lock); the gauge ends in the state made last, as
// ObserveState's doc says.
func TestFailureStateObservedOutOfOrder(t *testing.T) {
	obs, reader := newObserver(t)
	obs.ObserveState(middleware.StateFailingOpen, middleware.StateHealthy)
	obs.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
	points, _ := collect(t, reader)
	if got, want := stateLine(t, points), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("after healthy->open->healthy reported out of order: %s, want %s", got, want)
	}
}
