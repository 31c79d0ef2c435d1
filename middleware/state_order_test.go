package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// switchStore fails while fail is set, else decides with the store inside.
type switchStore struct {
	algorithms.Store
	fail atomic.Bool
}

func (s *switchStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.fail.Load() {
		return nil, errors.New("store down")
	}
	return s.Store.Take(ctx, checks...)
}

// stateLog records the state changes it is told, holding the first one
// until release is closed.
type stateLog struct {
	nopObserver
	mu      sync.Mutex
	got     []string
	entered chan struct{}
	release chan struct{}
	first   sync.Once
}

func (o *stateLog) ObserveState(from, to middleware.State) {
	o.first.Do(func() {
		close(o.entered)
		<-o.release
	})
	o.mu.Lock()
	o.got = append(o.got, from.String()+"->"+to.String())
	o.mu.Unlock()
}

// TestStateChangesReportedInOrder: the observer is told the state changes
// in the order they happen, each from the state the previous one went to.
// A request that fails (healthy -> open) and one that succeeds right after
// (open -> healthy) must not be reported the other way round, even when
// the first is slow to report: the log would end "open" on a healthy
// middleware.
func TestStateChangesReportedInOrder(t *testing.T) {
	mem, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	store := &switchStore{Store: mem}
	obs := &stateLog{entered: make(chan struct{}), release: make(chan struct{})}
	p := policy.Must(policy.PerSecond("per-ip", 100, keyfunc.Must(keyfunc.IP())))
	m, err := middleware.New(store, []*policy.Policy{p}, middleware.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	send := func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) }

	store.fail.Store(true)
	failed := make(chan struct{})
	go func() { defer close(failed); send() }() // healthy -> open, held while reporting
	<-obs.entered
	store.fail.Store(false)
	succeeded := make(chan struct{})
	go func() { defer close(succeeded); send() }() // open -> healthy
	// Wait until the second request has either reported (the bug) or is
	// waiting for the first one's report to finish.
	for waiting := false; !waiting; {
		select {
		case <-succeeded:
			waiting = true
		default:
			buf := make([]byte, 1<<20)
			st := string(buf[:runtime.Stack(buf, true)])
			waiting = strings.Contains(st, "middleware.(*Middleware).recovered") && strings.Contains(st, "sync.(*Mutex).Lock")
			if !waiting {
				runtime.Gosched()
				time.Sleep(time.Millisecond) // polls for the other goroutine; no time is asserted
			}
		}
	}
	close(obs.release)
	<-failed
	<-succeeded
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if got := strings.Join(obs.got, " "); got != "healthy->open open->healthy" {
		t.Errorf("state changes reported %q; want healthy->open then open->healthy", got)
	}
	if s := m.State(); s != middleware.StateHealthy {
		t.Errorf("State() = %v after a success; want healthy", s)
	}
}
