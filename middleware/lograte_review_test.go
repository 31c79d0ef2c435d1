package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// setClock is a clock a test sets, read by the log observer only.
type setClock struct{ ns atomic.Int64 }

func (c *setClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// TestLogRateStaleReadResetsNothing: LogRate(N) logs at most N denials per
// second and policy. A request that read the clock just before the second
// turned, and is logged after another request began the new second (under
// a flood, at every turn of a second), is counted in the second in
// progress: it does not take the count back to its own second, which let
// the requests after it take the new second up again from 0, N more
// records. Here a stale read at 5.999 s comes between denials at 6 s:
// LogRate(2) logs two of them, not four.
func TestLogRateStaleReadResetsNothing(t *testing.T) {
	var buf bytes.Buffer
	logClock := new(setClock)
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), middleware.LogRate(2), middleware.LogClock(logClock))
	if err != nil {
		t.Fatal(err)
	}
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Hour, user)}, middleware.WithObserver(lo), middleware.WithClock(clock))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok)
	deny := func() {
		t.Helper()
		if w := serve(r, "GET", "/", "X-User", "ann"); w.Code != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", w.Code)
		}
	}
	serve(r, "GET", "/", "X-User", "ann") // the one admitted

	sixth := int64(1_700_000_006) * int64(time.Second)
	logClock.ns.Store(sixth)
	deny()
	deny()
	logClock.ns.Store(sixth - int64(time.Millisecond)) // read before the second turned
	deny()
	logClock.ns.Store(sixth + int64(500*time.Millisecond))
	deny()
	deny()
	if recs := logRecords(t, &buf, "ratekeeper: request denied"); len(recs) != 2 {
		t.Errorf("%d denial records within the second 6 s..7 s (one read stale), want 2 (LogRate)", len(recs))
	}

	// A clock set back by more than a second (the wall clock corrected)
	// starts a second of its own: records are not suppressed until the
	// clock catches up again.
	buf.Reset()
	logClock.ns.Store(sixth - int64(time.Hour))
	deny()
	if recs := logRecords(t, &buf, "ratekeeper: request denied"); len(recs) != 1 {
		t.Errorf("%d denial records after the clock was set back an hour, want 1", len(recs))
	}
}

var _ algorithms.Clock = (*setClock)(nil)
