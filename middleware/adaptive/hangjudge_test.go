package adaptive_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestHungRequestsBeforeOrigin: a clock set back before the time it read
// at New (a host's clock corrected) made a slot of requests in flight
// that reached to the end of time (its end computed with an overflow), so
// every request begun after it was counted in that one slot, with the
// latest start of them all: a request begun just before a period's end
// hid every hung request from the judgement, and the level climbed back
// during the hang.
func TestHungRequestsBeforeOrigin(t *testing.T) {
	c, clock := lowered(t)
	clock.Set(t0.Add(-time.Hour))
	release := hung(t, c.Handler, 25)
	defer release()
	quick := c.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i := range 3 {
		// A request that begins and ends just before the period's end,
		// as some request does in a service that still gets traffic.
		clock.Advance(time.Minute - 5*time.Millisecond)
		quick.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		clock.Advance(5 * time.Millisecond)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if c.Level() != 0.8 {
			t.Fatalf("period %d of a hang begun on a clock set back before New's: level %v, want 0.8 held", i+1, c.Level())
		}
	}
}

// TestHungIdlePeriodsAsATickerJudgesThem: the periods that passed with no
// request to judge them were all held as soon as MinSamples requests in
// flight were known over the threshold at the evaluation, even those at
// whose end they were not yet over it, which a ticker's Evaluate judges
// healthy: whether a level climbed depended on whether a ticker ran.
// Each idle period is held only if its own end found them over.
func TestHungIdlePeriodsAsATickerJudgesThem(t *testing.T) {
	for _, how := range []string{"Evaluate each period", "a request after five"} {
		t.Run(how, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			// A threshold of 3 minutes over 1-minute periods.
			c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 90 * time.Second, Step: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 200, 3, 6*time.Minute)
			if c.Level() != 0.8 {
				t.Fatalf("level %v, want 0.8", c.Level())
			}
			release := hung(t, c.Handler, 25)
			defer release()
			if how == "Evaluate each period" {
				for range 5 {
					clock.Advance(time.Minute)
					if err := c.Evaluate(); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				clock.Advance(5 * time.Minute)
				c.Observe(time.Millisecond, http.StatusOK)
			}
			// Healthy while they are not over 3 minutes (the periods
			// ending 1, 2 and 3 minutes after they began), held after.
			if c.Level() != 0.95 {
				t.Errorf("five periods after 25 requests hung: level %v, want 0.95", c.Level())
			}
		})
	}
}

// TestHungRequestsDoNotMoveTheBaseline: a learned baseline moved toward
// the threshold in every period slow only by requests still in flight (a
// slow period's p99 is taken as the threshold it exceeded): 12.5% more per
// period of a hang, 3.2 times after ten, so that after the hang a service
// twice as slow as before and failing was no longer lowered; and only
// with a ticker: the same periods judged at once by a later request did
// not move it. Requests in flight have no latency yet: they judge a
// period, the baseline is learned from the requests that ended.
func TestHungRequestsDoNotMoveTheBaseline(t *testing.T) {
	for _, how := range []string{"Evaluate each period", "a request after ten"} {
		t.Run(how, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 200, 0, 10*time.Millisecond) // learns the baseline
			base := c.Baseline()
			period(t, c, clock, 200, 3, 3*base) // slow and failing
			if c.Level() != 0.8 || c.Baseline() != base {
				t.Fatalf("level %v, baseline %v; want 0.8, %v", c.Level(), c.Baseline(), base)
			}
			release := hung(t, c.Handler, 25)
			if how == "Evaluate each period" {
				for range 10 {
					clock.Advance(time.Minute)
					if err := c.Evaluate(); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				clock.Advance(10 * time.Minute)
				c.Observe(base, http.StatusOK)
			}
			if c.Level() != 0.8 || c.Baseline() != base {
				t.Errorf("after ten periods of 25 hung requests: level %v, baseline %v; want 0.8, %v", c.Level(), c.Baseline(), base)
			}
			release()
			clock.Advance(time.Minute)
			c.Evaluate() // the period the hung requests ended in
			period(t, c, clock, 200, 3, 3*base)
			if c.Level() != 0.64 {
				t.Errorf("a period three times as slow as before the hang, and failing: level %v, want 0.64", c.Level())
			}
		})
	}
}

// TestHungRequestsThroughClockSetBack: a clock set back (a host's clock
// corrected) restarts the period at the time it reads, its requests
// kept; but the requests in flight kept the start they had on the clock
// before, ahead of every reading after: none was known over the
// threshold until the clock came back there (an hour here), and the
// level climbed during the hang. Set back, they count as begun at the
// latest when the period restarted.
func TestHungRequestsThroughClockSetBack(t *testing.T) {
	c, clock := lowered(t)
	release := hung(t, c.Handler, 25)
	defer release()
	clock.Advance(30 * time.Second)
	clock.Set(clock.Now().Add(-time.Hour))
	if err := c.Evaluate(); err != nil { // restarts the period
		t.Fatal(err)
	}
	for i := range 3 {
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if c.Level() != 0.8 {
			t.Fatalf("period %d after the clock was set back an hour during a hang: level %v, want 0.8 held", i+1, c.Level())
		}
	}
}

// TestHungRequestsLogged: the record of a level lowered by a period of
// hung requests and failing ones gives the requests that ended (their
// p99 and errors) and the hung ones apart.
func TestHungRequestsLogged(t *testing.T) {
	var buf bytes.Buffer
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	release := hung(t, c.Handler, 25)
	defer release()
	clock.Advance(30 * time.Second)
	for range 5 {
		c.Observe(5*time.Millisecond, http.StatusGatewayTimeout)
	}
	clock.Advance(30 * time.Second)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	got := fmt.Sprintf("%v<-%v p99 %v requests %v errors %v hung %v", rec["limit_level"], rec["previous_level"], rec["p99"], rec["requests"], rec["errors"], rec["hung"])
	if want := "0.8<-1 p99 5.242879ms requests 5 errors 5 hung 25"; got != want {
		t.Errorf("record %s, want %s", got, want)
	}
}
