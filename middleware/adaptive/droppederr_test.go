package adaptive_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// refusingTarget is a middleware whose SetLimit fails while refuse is
// set, as a Target of the caller's own may (one that passes the limits
// on to other instances, say).
type refusingTarget struct {
	*middleware.Middleware
	mu     sync.Mutex
	refuse bool
}

var errRefused = errors.New("the instances did not answer")

func (t *refusingTarget) SetLimit(name string, limit int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refuse {
		return errRefused
	}
	return t.Middleware.SetLimit(name, limit)
}

// TestJudgementErrorLogged: a SetLimit that fails in a judgement a request
// made (not a caller's Evaluate, which returns it) is logged on the
// Controller's Logger, at Error, naming the error: it was dropped without
// a word, and the limits silently stayed where they were.
func TestJudgementErrorLogged(t *testing.T) {
	clock := algotest.NewClock(t0)
	ip := keyfunc.Must(keyfunc.IP())
	p := policy.Must(policy.New("api", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, ip))
	target := &refusingTarget{Middleware: clockedMiddleware(t, clock, []*policy.Policy{p})}
	var buf bytes.Buffer // the judgements run in the test's goroutine
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	c, err := adaptive.New(target, adaptive.Config{Clock: clock, Period: time.Minute, Baseline: 10 * time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	// A slow and failing period, judged by the next request: the level goes down,
	// and the SetLimit that would lower the limit fails.
	observe(c, 100, 5, 25*time.Millisecond)
	clock.Advance(time.Minute)
	target.mu.Lock()
	target.refuse = true
	target.mu.Unlock()
	c.Observe(10*time.Millisecond, 200) // the request that judges the period
	out := buf.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, errRefused.Error()) {
		t.Errorf("log after a judgement whose SetLimit failed:\n%s\nwant an ERROR record naming %q", out, errRefused)
	}
	if got := target.Set().Policies()[0].Spec().Limit; got != 100 {
		t.Fatalf("limit %d after the refused SetLimit; want 100 (the test's premise)", got)
	}
}
