package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLogObserverStateFlapBounded: a store that fails every other call
// (Redis timing out now and then, never five times in a row, so the
// breaker never opens) moves the middleware between healthy and open at
// every request. A LogObserver logs those changes at most LogRate a second
// as it does denials and store errors, the changes left out counted in
// "suppressed"; and the State the flapping ended in is logged at the first
// request after the second's budget, so that the log's last word on the
// State is right. Before, the LogObserver wrote one record per change: 400
// records for 400 requests within one second.
func TestLogObserverStateFlapBounded(t *testing.T) {
	const msg = "ratekeeper: failure state changed"
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	mem, _ := newStore(t)
	store := &flapping{Store: mem}
	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), middleware.LogRate(5), middleware.LogClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithObserver(lo)) // the default breaker: never 5 failures in a row
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(ok))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func() {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("status %d, want 200 (fail open)", res.StatusCode)
		}
	}

	for i := range 400 {
		store.down.Store(i%2 == 0)
		get()
	}
	// 400 changes, healthy>open first, the last open>healthy; the five
	// logged end at open.
	recs := logRecords(t, &buf, msg)
	if len(recs) != 5 {
		t.Fatalf("%d state records for 400 changes within one second, want 5 (LogRate)", len(recs))
	}
	if recs[0]["from"] != "healthy" || recs[0]["to"] != "open" || recs[0]["level"] != "WARN" {
		t.Errorf("first record %v, want a warning, healthy to open", recs[0])
	}
	if recs[4]["to"] != "open" {
		t.Fatalf("fifth record %v, want to open", recs[4])
	}

	// The next second: a request that changes nothing logs the State the
	// flood ended in, with the changes left out.
	clock.Advance(time.Second)
	store.down.Store(false)
	get()
	recs = logRecords(t, &buf, msg)
	if len(recs) != 6 {
		t.Fatalf("%d state records after the second turned, want 6", len(recs))
	}
	if last := recs[5]; last["from"] != "open" || last["to"] != "healthy" || last["level"] != "INFO" || last["suppressed"] != float64(395) {
		t.Errorf("record after the flood %v, want open to healthy (the State), information, 395 suppressed", last)
	}
	// Nothing more to tell: no record.
	get()
	if n := len(logRecords(t, &buf, msg)); n != 6 {
		t.Errorf("%d records once the State was told, want 6", n)
	}
	// A change after that is logged at once, nothing left out.
	store.down.Store(true)
	get()
	recs = logRecords(t, &buf, msg)
	if len(recs) != 7 || recs[6]["from"] != "healthy" || recs[6]["to"] != "open" || recs[6]["level"] != "WARN" || recs[6]["suppressed"] != nil {
		t.Errorf("records %d, last %v; want a seventh, a warning, healthy to open, no suppressed", len(recs), recs[len(recs)-1])
	}
}

// TestLogObserverStateConcurrent: several middlewares sharing one
// LogObserver tell it their changes at once; within one second it writes
// at most LogRate records, each a valid JSON object (go test -race finds
// no race on the sampling state).
func TestLogObserverStateConcurrent(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), middleware.LogRate(3), middleware.LogClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				lo.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
				lo.ObserveState(middleware.StateFailingOpen, middleware.StateHealthy)
			}
		})
	}
	wg.Wait()
	if n := len(logRecords(t, &buf, "ratekeeper: failure state changed")); n != 3 {
		t.Errorf("%d records for 3200 changes within one second, want 3", n)
	}
}
