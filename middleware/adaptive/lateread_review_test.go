package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// lateClock is a clock that never goes back, read by a goroutine that is
// descheduled between its reading and what it does with it (a request on
// a loaded machine, a GC pause): the reading after late is called is
// returned only once the function late returned is called, by then
// older than readings made meanwhile.
type lateClock struct {
	*algotest.Clock
	mu   sync.Mutex
	hold func()
}

func (c *lateClock) Now() time.Time {
	t := c.Clock.Now()
	c.mu.Lock()
	hold := c.hold
	c.hold = nil
	c.mu.Unlock()
	if hold != nil {
		hold()
	}
	return t
}

// late makes the next reading late: read is closed once that reading is
// made, and release lets it go on.
func (c *lateClock) late() (read <-chan struct{}, release func()) {
	r, rel := make(chan struct{}), make(chan struct{})
	c.mu.Lock()
	c.hold = func() { close(r); <-rel }
	c.mu.Unlock()
	return r, func() { close(rel) }
}

// get serves one request through h on its own goroutine and returns a
// channel of its status.
func get(h http.Handler) <-chan int {
	done := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		done <- w.Code
	}()
	return done
}

// TestFleetLateReadingReadsOnce: Every is "the shortest time between two
// readings of Instances by Check", read again early only "when the clock
// reads a time before" the last reading (set back). A request that read
// the clock as Every passed, but reached Check's lock only after another
// request had read the count (a later reading), took its own, earlier,
// reading for a clock set back and read the count again at once.
func TestFleetLateReadingReadsOnce(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			clock := &lateClock{Clock: algotest.NewClock(t0)}
			m := newMiddleware(t, 100)
			var reads atomic.Int64
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: 10 * time.Second,
				Instances: func() int { reads.Add(1); return 2 }})
			if err != nil {
				t.Fatal(err)
			}
			h := routed(router, emptyApp, f.Handler, m.Handler)
			clock.Advance(10 * time.Second) // Every passed
			read, release := clock.late()
			first := get(h) // reads the clock; held before Check goes on
			// The reading is made: the clock moves on, and a second
			// request reads the count.
			hangguard.Await(t, read, 10*time.Second, "the first request's reading")
			clock.Advance(time.Nanosecond)
			if code := hangguard.Await(t, get(h), 10*time.Second, "the second request"); code != http.StatusOK {
				t.Fatalf("second request: %d", code)
			}
			release()
			if code := hangguard.Await(t, first, 10*time.Second, "the first request"); code != http.StatusOK {
				t.Fatalf("first request: %d", code)
			}
			// NewFleet's reading, then the second request's, 10 s later.
			if got := reads.Load(); got != 2 {
				t.Errorf("Instances read %d times, want 2 (at NewFleet, then once when Every passed)", got)
			}
		})
	}
}

// TestControllerLateReadingKeepsThePeriod: a Controller restarts the
// period in course at the time read when "a clock set back before the
// start of the period in course" reads a time before it. A request that
// read the clock before a period's end, but reached the Controller's
// lock only after another request had ended that period (a later
// reading), took its own reading for a clock set back and restarted the
// new period as early as it read: that period ended as much before its
// end, judged early. Here a request read 59 s into the first minute,
// held until another ended the minute at 60 s: the second minute then
// ended at 119 s, and a healthy second raised the level at 119.5 s.
// Through SetFeedback, a ServeMux and chi.
func TestControllerLateReadingKeepsThePeriod(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			clock := &lateClock{Clock: algotest.NewClock(t0)}
			m := clockedMiddleware(t, clock.Clock, []*policy.Policy{policy.Must(policy.PerMinute("p0", 100, ip))})
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m.SetFeedback(c)
			// A first minute slow and failing: 0.8 once judged.
			observe(c, 20, 5, 30*time.Millisecond)
			h := routed(router, emptyApp, m.Handler)
			clock.Advance(59 * time.Second)
			read, release := clock.late()
			first := get(h) // reads 59 s, held
			hangguard.Await(t, read, 10*time.Second, "the first request's reading")
			clock.Advance(time.Second)
			if code := hangguard.Await(t, get(h), 10*time.Second, "the request at 60 s"); code != http.StatusOK {
				t.Fatalf("request at 60 s: %d", code)
			}
			if got := c.Level(); got != 0.8 {
				t.Fatalf("after the first minute: level %v, want 0.8", got)
			}
			release()
			if code := hangguard.Await(t, first, 10*time.Second, "the request read at 59 s"); code != http.StatusOK {
				t.Fatalf("request read at 59 s: %d", code)
			}
			clock.Advance(59*time.Second + 500*time.Millisecond) // 119.5 s
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got := c.Level(); got != 0.8 {
				t.Errorf("at 119.5 s: level %v, want 0.8 (the second minute, from 60 s, not ended)", got)
			}
			clock.Advance(500 * time.Millisecond) // 120 s
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got := c.Level(); got != 0.9 {
				t.Errorf("at 120 s: level %v, want 0.9 (a healthy second minute)", got)
			}
		})
	}
}
