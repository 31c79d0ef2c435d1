package middleware_test

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// deadlineRecord is the message of the record of a request a leaky_queue
// refused at once, its deadline coming before its turn.
const deadlineRecord = "ratekeeper: deadline before turn"

// TestLogDeadlineBeforeTurn: a request whose deadline comes before its
// turn in a leaky_queue is refused at once (503, not held) and logged, as
// "ratekeeper: deadline before turn", at Info as a denial or a hold cut
// short, with the policy whose queue it waited for, the client's pk (that
// of the response's RateLimit field under the same secret), the method,
// the route, the Delay the queue would have held it for ("delay") and the
// time its deadline left it ("deadline_in", read as the middleware judged
// it), and with LogRawKeys and LogRawPaths the key and the path, through a
// ServeMux and chi. It writes no hold record (it was not held) nor a
// denial's. Before, the log had no record of it, while denials and holds
// had theirs.
func TestLogDeadlineBeforeTurn(t *testing.T) {
	runHeldLogs(t, func(t *testing.T, c heldLogCase, hl *heldLog, buf *bytes.Buffer) {
		// The queue's first place: admitted at once.
		pk := hl.servedPK(t, "first request")

		// Its turn is 5 s away, its deadline 4 s: refused at once
		// (hl.wait fails the test if called).
		ctx, in := beforeTurnTimed(4 * time.Second)
		if w := hl.serve(ctx); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("request with a deadline before its turn: %d, want 503", w.Code)
		}
		lo, hi := in()
		recs := logRecords(t, bytes.NewBuffer(buf.Bytes()), deadlineRecord)
		if len(recs) != 1 {
			t.Fatalf("%d %q records, want 1:\n%s", len(recs), deadlineRecord, buf.String())
		}
		rec := recs[0]
		left, err := time.ParseDuration(stringAttr(rec, "deadline_in"))
		if err != nil || left < lo || left > hi {
			t.Errorf("deadline_in %v (%v), want the time left of the 4s deadline when the middleware judged it, in [%v, %v]", rec["deadline_in"], err, lo, hi)
		}
		delete(rec, "time")
		delete(rec, "deadline_in")
		want := c.record(map[string]any{"level": "INFO", "msg": deadlineRecord, "policy": "queue", "pk": pk,
			"method": "GET", "route": c.route, "delay": "5s", "suppressed": float64(0)})
		if !maps.Equal(rec, want) {
			t.Errorf("record\n%v\nwant\n%v", rec, want)
		}
		for _, msg := range []string{"ratekeeper: request held", "ratekeeper: request denied"} {
			if n := len(logRecords(t, bytes.NewBuffer(buf.Bytes()), msg)); n != 0 {
				t.Errorf("%d %q records for the refused request:\n%s", n, msg, buf.String())
			}
		}
	})
}

// stringAttr returns the string attribute k of rec, "" if it has none.
func stringAttr(rec map[string]any, k string) string {
	s, _ := rec[k].(string)
	return s
}

// TestLogDeadlineBeforeTurnText: in a text log at the default level the
// record reads as the others do; below Info (a log at Warn) it is neither
// written nor counted.
func TestLogDeadlineBeforeTurnText(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		var buf bytes.Buffer
		// deadline_in, read on the system clock, is checked against
		// the time left when the request was served and when it
		// returned, and written as "LEFT".
		var logged []string
		replace := func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == "deadline_in" {
				logged = append(logged, a.Value.String())
				return slog.String(a.Key, "LEFT")
			}
			return withoutTime(groups, a)
		}
		hl := newHeldLog(t, slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level, ReplaceAttr: replace}), heldRouters[0].router, 3)
		w := hl.serve(context.Background())
		ctx, in := beforeTurnTimed(3 * time.Second)
		if r := hl.serve(ctx); r.Code != http.StatusServiceUnavailable {
			t.Fatalf("request with a deadline before its turn: %d, want 503", r.Code)
		}
		lo, hi := in()
		for _, v := range logged {
			if d, err := time.ParseDuration(v); err != nil || d < lo || d > hi {
				t.Errorf("deadline_in %s (%v), want the time left of the 3s deadline when the middleware judged it, in [%v, %v]", v, err, lo, hi)
			}
		}
		want := ""
		if level == slog.LevelInfo {
			want = `level=INFO msg="ratekeeper: deadline before turn" policy=queue pk=` + queuePK(w) +
				` method=GET route="GET /items/{id}" delay=5s deadline_in=LEFT suppressed=0` + "\n"
		}
		if got := buf.String(); got != want {
			t.Errorf("log at %v\n%s\nwant\n%s", level, got, want)
		}
	}
}

// TestLogDeadlineBeforeTurnSampled: the records of requests refused for
// their deadline are sampled per policy at LogRate on the budget of the
// policy's Info queue records: at LogRate(1) a served hold's Debug record
// (a budget of its own) does not crowd out a refusal of the same second,
// two refusals in one second write one record, the next second's counts
// the other in "suppressed"; a second's queue records do not crowd out
// its denials.
func TestLogDeadlineBeforeTurnSampled(t *testing.T) {
	var buf bytes.Buffer
	hl := newHeldLog(t, debugJSON(&buf), heldRouters[1].router, 5, middleware.LogRate(1))
	hl.serve(context.Background())                                      // not held: the queue's first place
	hl.wait = func(context.Context, time.Duration) error { return nil } // held 0 s on the clock
	if w := hl.serve(context.Background()); w.Code != http.StatusOK {   // held 5 s: logged
		t.Fatalf("held request: %d", w.Code)
	}
	refuse := func() {
		t.Helper()
		ctx := beforeTurn(time.Second)
		if w := hl.serve(ctx); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("request with a deadline before its turn: %d, want 503", w.Code)
		}
	}
	refuse() // turn 10 s away: logged
	refuse() // again: suppressed
	hl.clock.Advance(time.Second)
	refuse()                    // turn 9 s away: logged, suppressed=1
	hl.deny(t, "sixth request") // per-ip's sixth
	wantQueueLog(t, &buf, "held 5s suppressed=0", "refused 10s suppressed=0", "refused 9s suppressed=1", "denied by per-ip")
}
