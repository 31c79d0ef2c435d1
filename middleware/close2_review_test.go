package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// closeWatcher is a CloseObserver (and a RemovalObserver) that notes
// every report of limits, removals and changes of State that comes after
// the Close it was told of.
type closeWatcher struct {
	stateCounter
	closed atomic.Bool
	late   atomic.Int64
	limits atomic.Int64
}

func (w *closeWatcher) ObserveClose(last middleware.State) {
	w.stateCounter.ObserveClose(last)
	w.closed.Store(true)
}

func (w *closeWatcher) ObserveState(from, to middleware.State) {
	if w.closed.Load() {
		w.late.Add(1)
	}
	w.stateCounter.ObserveState(from, to)
}

func (w *closeWatcher) ObserveLimit(string, int64, int64) {
	w.limits.Add(1)
	if w.closed.Load() {
		w.late.Add(1)
	}
}

func (w *closeWatcher) ObservePolicyRemoved(string) {
	if w.closed.Load() {
		w.late.Add(1)
	}
}

// TestClosedMiddlewareReportsNoLimits: once closed, a middleware tells
// none of its observers (a CloseObserver, a plain one) of a limit
// SetLimit changes or of the policies SetPolicies adds or removes, while
// it enforces them: its requests are decided under the new limit.
func TestClosedMiddlewareReportsNoLimits(t *testing.T) {
	store, _ := newStore(t)
	w := &closeWatcher{}
	plain := &recorder{}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithObserver(w, plain))
	if err := m.SetLimit("p", 50); err != nil {
		t.Fatal(err)
	}
	before := plain.limitsString()
	m.Close()
	if err := m.SetLimit("p", 1); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("q", 1, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 1, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if n := w.late.Load(); n != 0 {
		t.Errorf("%d reports of limits reached the CloseObserver after Close, want none", n)
	}
	if got := plain.limitsString(); got != before {
		t.Errorf("plain observer told %q, want %q (nothing after Close)", got, before)
	}
	h := m.Handler(ok)
	if a, b := serve(h, "GET", "/").Code, serve(h, "GET", "/").Code; a != http.StatusOK || b != http.StatusTooManyRequests {
		t.Errorf("closed middleware at limit 1 answered %d then %d, want 200 then 429", a, b)
	}
}

// TestCloseRacingLimitsAndFailures: Close while requests move the
// middleware between healthy and failing open and another goroutine
// changes a limit over and over (an adaptive Controller): whatever the
// interleaving, no report of a State or a limit reaches the observer
// after its ObserveClose, and it ends counting the middleware in no
// failure State. Run with -race.
func TestCloseRacingLimitsAndFailures(t *testing.T) {
	for round := range 10 {
		store, _ := newStore(t)
		w := &closeWatcher{}
		lo, err := middleware.NewLogObserver(slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		m := middleware.MustNew(&alternating{Store: store}, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)},
			middleware.WithObserver(lo, w), middleware.WithBreaker(0, 0))
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", ok)
		var reqs, writer sync.WaitGroup
		var served atomic.Int64
		half := make(chan struct{})
		stop := make(chan struct{})
		wrote := make(chan struct{}) // closed after the writer's first SetLimit
		writer.Go(func() {
			for i := int64(0); ; i++ {
				if i == 1 {
					close(wrote)
				}
				select {
				case <-stop:
					return
				default:
				}
				if err := m.SetLimit("p", 500_000+i%2); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for range 3 {
			reqs.Go(func() {
				for range 50 {
					serve(r, "GET", "/")
					if served.Add(1) == 75 {
						close(half)
					}
				}
			})
		}
		reqs.Go(func() {
			<-half
			<-wrote
			m.Close()
		})
		reqs.Wait()
		close(stop)
		writer.Wait()
		if n := w.late.Load(); n != 0 {
			t.Fatalf("round %d: %d reports after ObserveClose, want none", round, n)
		}
		if got := w.failing(); got != [len(middleware.States)]int{} {
			t.Fatalf("round %d: counted %v failing after Close, want none", round, got)
		}
	}
}

// TestClosedMiddlewareStillLogs: Close stops no logging of the requests
// a closed middleware still serves: without an observer its changes of
// State go on being logged on slog.Default; with a LogObserver (which is
// no CloseObserver) they are not told (Close tells the observers of no
// change of State), but each store failure is still logged as one.
func TestClosedMiddlewareStillLogs(t *testing.T) {
	def := defaultLogTo(t)
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))

	mem, _ := newStore(t)
	st := &switchable{Store: mem}
	m := middleware.MustNew(st, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0))
	m.Close()
	st.down.Store(true)
	serve(m.Handler(ok), "GET", "/")
	if recs := logRecords(t, def, "ratekeeper: failure state changed"); len(recs) != 1 || recs[0]["to"] != "open" {
		t.Errorf("no observer, closed: records %v, want the change to open", recs)
	}

	var buf bytes.Buffer
	st.down.Store(false)
	m = middleware.MustNew(st, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0), middleware.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	m.Close()
	st.down.Store(true)
	serve(m.Handler(ok), "GET", "/")
	if recs := logRecords(t, &buf, "ratekeeper: failure state changed"); len(recs) != 0 {
		t.Errorf("LogObserver, closed: state records %v, want none", recs)
	}
	if !strings.Contains(buf.String(), `"msg":"ratekeeper: store failed"`) {
		t.Errorf("LogObserver, closed: log %q, want the store failure", buf.String())
	}
}
