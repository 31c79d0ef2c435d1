package middleware_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// heldLog is a middleware whose LogObserver writes to a handler, in a
// router, with a leaky_queue "queue" (2 per 10 s: a place every 5 s;
// MaxDelay 1m) and a fixed window "per-ip" (perIP a minute), both keyed by
// RemoteAddr, all on one clock. wait holds each request the queue
// delays.
type heldLog struct {
	h     http.Handler
	clock *algotest.Clock
	wait  func(ctx context.Context, d time.Duration) error
}

var heldLogSecret = []byte("held log test secret, 16+ bytes")

// newHeldLog returns a heldLog logging to lh through router, which puts
// the middleware on the route "/items/{id}" (GET).
func newHeldLog(t *testing.T, lh slog.Handler, router func(mw func(http.Handler) http.Handler) http.Handler, perIP int64, opts ...middleware.LogOption) *heldLog {
	t.Helper()
	hl := &heldLog{clock: algotest.NewClock(t0)}
	hl.noHold(t, "a request")
	lo, err := middleware.NewLogObserver(slog.New(lh), append([]middleware.LogOption{middleware.LogClock(hl.clock), middleware.LogPartitionKey(heldLogSecret)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(hl.clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: 10 * time.Second, MaxDelay: time.Minute}, remote))
	m := middleware.MustNew(store, []*policy.Policy{queue, fixed("per-ip", perIP, time.Minute, remote)},
		middleware.WithObserver(lo), middleware.WithClock(hl.clock), middleware.WithPartitionKey(heldLogSecret),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { return hl.wait(ctx, d) }))
	hl.h = router(m.Handler)
	return hl
}

// debugJSON is a log handler writing JSON to buf at every level from
// Debug.
func debugJSON(buf *bytes.Buffer) slog.Handler {
	return slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})
}

// serve sends GET /items/42 with ctx and returns the response.
func (hl *heldLog) serve(ctx context.Context) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	hl.h.ServeHTTP(w, httptest.NewRequest("GET", "/items/42", nil).WithContext(ctx))
	return w
}

// advance is a wait that holds the request for d on the clock.
func (hl *heldLog) advance(_ context.Context, d time.Duration) error {
	hl.clock.Advance(d)
	return nil
}

// noHold makes the requests from now on fail t if they are held: what
// names them.
func (hl *heldLog) noHold(t *testing.T, what string) {
	hl.wait = func(_ context.Context, d time.Duration) error {
		t.Errorf("%s held for %s; want no hold", what, d)
		return nil
	}
}

// leaveAfter returns the context of a request whose client leaves once
// it has been held for held on the clock: the next hold moves the clock
// on by held, cancels the context and ends with its error.
func (hl *heldLog) leaveAfter(t *testing.T, held time.Duration) context.Context {
	ctx, leave := context.WithCancel(context.Background())
	t.Cleanup(leave)
	hl.wait = func(ctx context.Context, _ time.Duration) error {
		hl.clock.Advance(held)
		leave()
		<-ctx.Done()
		return ctx.Err()
	}
	return ctx
}

// withoutTime is a ReplaceAttr that drops the time of a record.
func withoutTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// servedPK serves a request (what), fails t unless it is admitted with a
// pk in the queue's member of RateLimit, and returns that pk.
func (hl *heldLog) servedPK(t *testing.T, what string) string {
	t.Helper()
	w := hl.serve(context.Background())
	if w.Code != http.StatusOK {
		t.Fatalf("%s: %d", what, w.Code)
	}
	pk := queuePK(w)
	if pk == "" {
		t.Fatalf("%s: no pk in RateLimit %q", what, w.Header().Get("RateLimit"))
	}
	return pk
}

// queuePK returns the pk of the "queue" member of the RateLimit field of
// w, "" if it has none.
func queuePK(w *httptest.ResponseRecorder) string {
	for _, member := range strings.Split(w.Header().Get("RateLimit"), ", ") {
		if strings.HasPrefix(member, `"queue";`) {
			if _, pk, ok := strings.Cut(member, ";pk="); ok {
				pk, _, _ = strings.Cut(pk, ";")
				return pk
			}
		}
	}
	return ""
}

// heldRouters put the middleware on the route of GET /items/{id}, and
// give the route pattern the middleware finds.
var heldRouters = []struct {
	name   string
	router func(mw func(http.Handler) http.Handler) http.Handler
	route  string
}{
	{"ServeMux", func(mw func(http.Handler) http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /items/{id}", mw(ok))
		return mux
	}, "GET /items/{id}"},
	{"chi", func(mw func(http.Handler) http.Handler) http.Handler {
		r := chi.NewRouter()
		r.With(mw).Get("/items/{id}", ok)
		return r
	}, "/items/{id}"},
}

// A heldLogCase is one of the subtests of runHeldLogs: the route pattern
// the middleware finds, and whether the log has LogRawKeys and
// LogRawPaths.
type heldLogCase struct {
	route string
	raw   bool
}

// record returns rec, a record of the queue, with what the case's log
// adds to it: with the raw options, the key and the path.
func (c heldLogCase) record(rec map[string]any) map[string]any {
	if c.raw {
		rec["key"], rec["path"] = "queue:192.0.2.1:1234", "/items/42"
	}
	return rec
}

// runHeldLogs runs f in a subtest for each of heldRouters, without and
// with LogRawKeys and LogRawPaths, on a heldLog (per-ip 3 a minute)
// logging JSON at Debug to buf.
func runHeldLogs(t *testing.T, f func(t *testing.T, c heldLogCase, hl *heldLog, buf *bytes.Buffer)) {
	for _, rt := range heldRouters {
		for _, raw := range []bool{false, true} {
			name := rt.name
			if raw {
				name += "/LogRawKeys+LogRawPaths"
			}
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				var opts []middleware.LogOption
				if raw {
					opts = append(opts, middleware.LogRawKeys(), middleware.LogRawPaths())
				}
				f(t, heldLogCase{rt.route, raw}, newHeldLog(t, debugJSON(&buf), rt.router, 3, opts...), &buf)
			})
		}
	}
}

// TestLogHeld: a request a leaky_queue held for its turn is logged, as
// "ratekeeper: request held", with the time it was held ("held", on the
// middleware's clock) and the Delay the queue gave it ("delay"), how the
// hold ended ("outcome": allowed, served after it, at Debug; abandoned,
// its client gone during the hold, at Info, as a denial), the policy that
// held it, the client's pk (that of the response's RateLimit field under
// the same secret), the method and the route, and with LogRawKeys and
// LogRawPaths the key and the path, through a ServeMux and chi. A request
// not held is logged as before: one admitted at once writes nothing, and
// a denial's record has no "held" nor "delay". Before, no record told of
// a hold: the log was empty after the held and the abandoned requests.
func TestLogHeld(t *testing.T) {
	runHeldLogs(t, func(t *testing.T, c heldLogCase, hl *heldLog, buf *bytes.Buffer) {
		// Admitted at once (the queue's first place): not held, nothing
		// logged.
		if w := hl.serve(context.Background()); w.Code != http.StatusOK {
			t.Fatalf("first request: %d", w.Code)
		}
		if buf.Len() != 0 {
			t.Fatalf("a request not held logged:\n%s", buf.String())
		}

		// Held 5 s, then served.
		hl.wait = hl.advance
		pk := hl.servedPK(t, "held request")
		want := func(level, outcome, held, delay string) map[string]any {
			return c.record(map[string]any{"level": level, "msg": "ratekeeper: request held", "policy": "queue", "pk": pk,
				"method": "GET", "route": c.route, "outcome": outcome, "held": held, "delay": delay, "suppressed": float64(0)})
		}
		wantRecords(t, buf, "after the served hold", want("DEBUG", "allowed", "5s", "5s"))

		// Held 2 s of its 5, its client gone: abandoned.
		if w := hl.serve(hl.leaveAfter(t, 2*time.Second)); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("abandoned request: %d", w.Code)
		}
		wantRecords(t, buf, "after the abandoned hold", want("INFO", "abandoned", "2s", "5s"))

		// Denied by per-ip (its fourth request this minute): the denial's
		// record, without hold attributes.
		hl.noHold(t, "the denied request")
		if w := hl.serve(context.Background()); w.Code != http.StatusTooManyRequests {
			t.Fatalf("fourth request: %d, want 429", w.Code)
		}
		denials := logRecords(t, buf, "ratekeeper: request denied")
		if len(denials) != 1 {
			t.Fatalf("%d denial records, want 1:\n%s", len(denials), buf.String())
		}
		for _, k := range []string{"held", "delay", "outcome"} {
			if v, ok := denials[0][k]; ok {
				t.Errorf("denial record has %s=%v: %v", k, v, denials[0])
			}
		}
	})
}

// wantRecords fails t unless the records of held requests in buf (JSON),
// without their time, are want, in order; then it empties buf.
func wantRecords(t *testing.T, buf *bytes.Buffer, when string, want ...map[string]any) {
	t.Helper()
	got := logRecords(t, buf, "ratekeeper: request held")
	for _, rec := range got {
		delete(rec, "time")
	}
	if !slices.EqualFunc(got, want, maps.Equal) {
		t.Errorf("%s: hold records\n%v\nwant\n%v\n(log: %s)", when, got, want, buf.String())
	}
	buf.Reset()
}

// TestLogHeldText: in a text log at the default level (Info), the served
// hold is not written (it is logged at Debug) and the abandoned one reads
// with its durations as in a denial's retry_after.
func TestLogHeldText(t *testing.T) {
	var buf bytes.Buffer
	hl := newHeldLog(t, slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: withoutTime}), heldRouters[0].router, 3)
	hl.serve(context.Background())
	hl.wait = hl.advance
	w := hl.serve(context.Background())
	if w.Code != http.StatusOK || buf.Len() != 0 {
		t.Fatalf("served hold: %d, log at Info %q; want 200 and nothing", w.Code, buf.String())
	}
	hl.serve(hl.leaveAfter(t, 1500*time.Millisecond))
	want := `level=INFO msg="ratekeeper: request held" policy=queue pk=` + queuePK(w) +
		` method=GET route="GET /items/{id}" outcome=abandoned held=1.5s delay=5s suppressed=0` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("log\n%s\nwant\n%s", got, want)
	}
}

// TestLogHeldSampled: the records of holds are sampled per policy at
// LogRate, the ones left out counted in the next one's "suppressed", on a
// budget of their own: a second's holds do not crowd out its denials.
func TestLogHeldSampled(t *testing.T) {
	var buf bytes.Buffer
	hl := newHeldLog(t, debugJSON(&buf), heldRouters[1].router, 4, middleware.LogRate(1))
	instant := func(context.Context, time.Duration) error { return nil } // held 0 s on the clock
	for i, want := range []int{200, 200, 200} {                          // not held, held, held (not logged)
		if i > 0 {
			hl.wait = instant
		}
		if w := hl.serve(context.Background()); w.Code != want {
			t.Fatalf("request %d: %d, want %d", i+1, w.Code, want)
		}
	}
	hl.clock.Advance(time.Second)
	hl.serve(context.Background()) // held, logged with suppressed=1
	hl.deny(t, "fifth request")    // per-ip's fifth
	wantQueueLog(t, &buf, "held 5s suppressed=0", "held 14s suppressed=1", "denied by per-ip")
}

// deny serves a request (what) that per-ip denies, and fails t unless it
// is denied, not held.
func (hl *heldLog) deny(t *testing.T, what string) {
	t.Helper()
	hl.noHold(t, what)
	if w := hl.serve(context.Background()); w.Code != http.StatusTooManyRequests {
		t.Fatalf("%s: %d, want 429", what, w.Code)
	}
}

// wantQueueLog fails t unless the records in buf (JSON) of holds, of
// refusals for a deadline before the turn and of denials are want, in
// order, each as "held <delay> suppressed=<n>", "refused <delay>
// suppressed=<n>" or "denied by <policy>".
func wantQueueLog(t *testing.T, buf *bytes.Buffer, want ...string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		one := func(msg string) []map[string]any { return logRecords(t, bytes.NewBufferString(line), msg) }
		for _, rec := range one("ratekeeper: request held") {
			got = append(got, "held "+rec["delay"].(string)+" suppressed="+jsonNumber(rec["suppressed"]))
		}
		for _, rec := range one(deadlineRecord) {
			got = append(got, "refused "+rec["delay"].(string)+" suppressed="+jsonNumber(rec["suppressed"]))
		}
		for _, rec := range one("ratekeeper: request denied") {
			got = append(got, "denied by "+rec["policy"].(string))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("records %q, want %q\n(log: %s)", got, want, buf.String())
	}
}

// jsonNumber formats a JSON number decoded into v.
func jsonNumber(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
