package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// A stress run drives many callers of one host through two Transports that
// share a store, in virtual time, with random arrivals, cancellations and
// Retry-After refusals, and checks what must always hold:
//
//   - rate: no two requests reach the server less than one interval apart
//     (every departure is a distinct turn of the shared queue);
//   - order: the callers of one Transport that queued before any hold
//     (the first wave, arriving 1ms apart) reach the server in the order
//     they arrived, whatever holds and cancellations happen meanwhile, and
//     so do all its callers' first attempts, those that arrived during a
//     hold included (callers arriving at one instant aside);
//   - outcome: every caller is sent (200 or the 429 itself), fails with a
//     *WaitError whose Wait exceeds its MaxWait, or, cancelled, returns
//     context.Canceled at the instant of the cancellation; a caller with a
//     deadline is sent before it or fails with a *WaitError for it, before
//     it too (never waiting into it); a first-wave
//     caller comes back within its maximum wait of its arrival, and one of
//     the second wave (which may first wait for a hold) within twice that.
type stressRun struct {
	seed     uint64
	wave1    int // callers arriving 1ms apart from 0
	wave2    int // callers arriving at random instants after the first wave
	retries  int
	cancelP  float64 // probability that a caller's context is cancelled
	refuseP  float64 // probability that a request after the first wave is refused
	interval time.Duration
	maxWait  time.Duration
	snap     time.Duration // cancellations at multiples of snap (to meet turns); 0: any ms
	reactive bool          // WithProactive(false)
	yield    bool          // store calls yield the processor a few times (lines stay busy longer)
	// arriveSnap puts the second wave's arrivals on multiples of it, so
	// that several arrive together, at the instants of turns, holds and
	// cancellations: a request may find no request of its Transport in
	// a line and ask for its turn without the line while others join it.
	arriveSnap time.Duration
	// deadlineP is the probability that a caller not cancelled has a
	// context deadline, within 3s of its arrival in virtual time (see
	// virtualDeadline).
	deadlineP float64
	// hintP is the probability that a response served after the first
	// wave says no quota is left for 1s (a RateLimit field, not a
	// Retry-After: it holds the requests that arrive, not those queued).
	hintP float64
}

// virtualDeadline is a context whose deadline is an instant of a fakeClock:
// Deadline reports the real instant as far from time.Now as that instant is
// from the clock's now, so a Transport comparing it in real time sees the
// virtual time left (a little less: real time passes meanwhile, never more).
// Its Done closes when its caller's canceller reaches that instant; Err is
// then DeadlineExceeded.
type virtualDeadline struct {
	context.Context
	clock *fakeClock
	at    time.Time
}

func (c virtualDeadline) Deadline() (time.Time, bool) {
	return time.Now().Add(c.at.Sub(c.clock.Now())), true
}

func (c virtualDeadline) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// yieldStore is a MemoryStore whose calls yield the processor first, so
// that callers meet a line busy in a store call more often.
type yieldStore struct {
	mem *algorithms.MemoryStore
	n   atomic.Int64
}

func (s *yieldStore) spin() {
	for range s.n.Add(1) % 7 * 4 {
		runtime.Gosched()
	}
}

func (s *yieldStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.spin()
	return s.mem.Take(ctx, checks...)
}

func (s *yieldStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	s.spin()
	return s.mem.Refund(ctx, dst, checks, ds, waited)
}

type stressCaller struct {
	tr       int           // which Transport
	arrive   time.Duration // when it calls RoundTrip
	cancelAt time.Duration // when its context is cancelled; 0: never
	deadline time.Duration // when its context's deadline passes; 0: none
	ra       int           // Retry-After seconds if its first request is refused; 0: served
	// results
	err    error
	status int
	ended  time.Duration
}

type stressHit struct {
	caller  int
	at      time.Duration
	attempt int
}

func (s stressRun) run(t *testing.T) {
	t.Helper()
	failed := t.Failed()
	rng := rand.New(rand.NewPCG(s.seed, 0x5eed))
	var broken sync.Once
	defer client.CheckLines(func(why string) {
		broken.Do(func() { t.Errorf("seed %d: a line broke: %s", s.seed, why) })
	})()
	clock := newFakeClock()
	n := s.wave1 + s.wave2
	callers := make([]*stressCaller, n)
	firstWaveEnd := time.Duration(s.wave1) * time.Millisecond
	for i := range callers {
		c := &stressCaller{tr: rng.IntN(2)}
		if i < s.wave1 {
			c.arrive = time.Duration(i) * time.Millisecond
		} else {
			c.arrive = firstWaveEnd + time.Duration(rng.IntN(4000))*time.Millisecond + time.Duration(i)*time.Microsecond
			if s.arriveSnap > 0 {
				c.arrive = (c.arrive/s.arriveSnap + 1) * s.arriveSnap
			}
		}
		if rng.Float64() < s.cancelP {
			c.cancelAt = c.arrive + time.Duration(rng.IntN(3000)+1)*time.Millisecond
			if s.snap > 0 {
				c.cancelAt = (c.cancelAt/s.snap + 1) * s.snap
			}
		}
		if rng.Float64() < s.refuseP {
			c.ra = 1 + rng.IntN(2)
		}
		if s.deadlineP > 0 && c.cancelAt == 0 && rng.Float64() < s.deadlineP {
			c.deadline = c.arrive + time.Duration(rng.IntN(3000)+1)*time.Millisecond
			if s.snap > 0 {
				c.deadline = (c.deadline/s.snap + 1) * s.snap
			}
		}
		callers[i] = c
	}
	// The server is a RoundTripper under the Transports: it records the
	// instant each request leaves them (an HTTP server would see a request
	// whose caller was cancelled as it left at some later instant).
	var mu sync.Mutex
	var hits []stressHit
	attempts := make([]int, n)
	hinted := make([]bool, n)
	for i := range hinted {
		hinted[i] = rng.Float64() < s.hintP
	}
	server := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		i, _ := strconv.Atoi(r.Header.Get("X-Caller"))
		now := clock.Now().Sub(t0)
		mu.Lock()
		attempts[i]++
		a := attempts[i]
		hits = append(hits, stressHit{caller: i, at: now, attempt: a})
		mu.Unlock()
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
		// Refusals only once the first wave has queued, so that it
		// queues in its order of arrival, with no hold to wait for.
		if a == 1 && callers[i].ra > 0 && now >= firstWaveEnd {
			resp.StatusCode = http.StatusTooManyRequests
			resp.Header.Set("Retry-After", strconv.Itoa(callers[i].ra))
		} else if now >= firstWaveEnd && hinted[i] {
			resp.Header.Set("RateLimit", `"p";r=0;t=1`)
		}
		return resp, nil
	})
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	var store algorithms.Store = mem
	if s.yield {
		store = &yieldStore{mem: mem}
	}
	limit := int64(time.Second / s.interval)
	opts := []client.Option{client.WithRate(limit, time.Second), client.WithMaxWait(s.maxWait),
		client.WithStore(store), client.WithRetries(s.retries), client.WithProactive(!s.reactive)}
	var hcs []*http.Client
	for range 2 {
		tr, err := client.New(server, append([]client.Option{client.WithClock(clock)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		hcs = append(hcs, &http.Client{Transport: tr})
	}

	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	var cancellers []int
	for i, c := range callers {
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
		if c.deadline > 0 {
			ctxs[i] = virtualDeadline{Context: ctxs[i], clock: clock, at: t0.Add(c.deadline)}
		}
		if c.cancelAt > 0 || c.deadline > 0 {
			cancellers = append(cancellers, i)
		}
	}
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	clock.drive(t, n+len(cancellers), func(k int) {
		if k >= n {
			i := cancellers[k-n]
			clock.Sleep(context.Background(), max(callers[i].cancelAt, callers[i].deadline))
			cancels[i]()
			return
		}
		c := callers[k]
		if c.arrive > 0 {
			clock.Sleep(context.Background(), c.arrive)
		}
		req, _ := http.NewRequestWithContext(ctxs[k], http.MethodGet, "http://api.example", nil)
		req.Header.Set("X-Caller", strconv.Itoa(k))
		resp, err := hcs[c.tr].Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c.status = resp.StatusCode
		}
		c.err, c.ended = err, clock.Now().Sub(t0)
	})

	mu.Lock()
	defer mu.Unlock()
	desc := func() string {
		var b []byte
		for _, h := range hits {
			b = fmt.Appendf(b, " %d@%v(tr%d,a%d)", h.caller, h.at, callers[h.caller].tr, h.attempt)
		}
		return string(b)
	}
	defer func() {
		// A failure of this run: its callers, to follow what happened.
		if !failed && t.Failed() {
			t.Logf("seed %d: hits:%s", s.seed, desc())
			for i, c := range callers {
				t.Logf("seed %d: caller %d tr%d arrive %v cancel %v deadline %v ra %d hinted %v: status %d err %v ended %v",
					s.seed, i, c.tr, c.arrive, c.cancelAt, c.deadline, c.ra, hinted[i], c.status, c.err, c.ended)
			}
		}
	}()
	// Rate.
	slices.SortStableFunc(hits, func(a, b stressHit) int { return int(a.at - b.at) })
	for j := 1; j < len(hits); j++ {
		if d := hits[j].at - hits[j-1].at; d < s.interval {
			t.Errorf("seed %d: callers %d and %d reached the server %v apart, less than %v:%s",
				s.seed, hits[j-1].caller, hits[j].caller, d, s.interval, desc())
			break
		}
	}
	// Order of the first wave, per Transport.
	for tr := range 2 {
		last := -1
		for _, h := range hits {
			if h.attempt != 1 || h.caller >= s.wave1 || callers[h.caller].tr != tr {
				continue
			}
			if h.caller < last {
				t.Errorf("seed %d: Transport %d sent caller %d after caller %d, which arrived later:%s",
					s.seed, tr, h.caller, last, desc())
				break
			}
			last = h.caller
		}
	}
	// Order of all first attempts, per Transport (arrivals at one instant
	// aside).
	for tr := range 2 {
		var last *stressCaller
		lastI := -1
		for _, h := range hits {
			c := callers[h.caller]
			if h.attempt != 1 || c.tr != tr {
				continue
			}
			if last != nil && c.arrive < last.arrive {
				t.Errorf("seed %d: Transport %d sent caller %d (arrived %v) after caller %d (arrived %v):%s",
					s.seed, tr, h.caller, c.arrive, lastI, last.arrive, desc())
				break
			}
			last, lastI = c, h.caller
		}
	}
	// Outcomes.
	firstAt := map[int]time.Duration{}
	for _, h := range hits {
		if h.attempt == 1 {
			firstAt[h.caller] = h.at
		}
	}
	for i, c := range callers {
		bound := c.arrive + s.maxWait
		if i >= s.wave1 {
			bound += s.maxWait
		}
		sentAt, sent := firstAt[i]
		var we *client.WaitError
		switch {
		case c.err == nil && (c.status == 200 || c.status == 429):
			if !sent {
				t.Errorf("seed %d: caller %d got %d without reaching the server", s.seed, i, c.status)
			} else if sentAt > bound {
				t.Errorf("seed %d: caller %d (arrived %v) sent at %v, beyond its bound %v:%s", s.seed, i, c.arrive, sentAt, bound, desc())
			}
		case errors.As(c.err, &we) && we.Deadline:
			if c.deadline == 0 || c.ended >= c.deadline {
				t.Errorf("seed %d: caller %d (deadline %v) failed for its deadline at %v: %v", s.seed, i, c.deadline, c.ended, c.err)
			}
		case errors.As(c.err, &we):
			if we.Wait <= we.MaxWait || we.MaxWait != s.maxWait {
				t.Errorf("seed %d: caller %d: %+v: Wait within MaxWait", s.seed, i, we)
			}
			// A caller refused and retried has a new wait for each retry.
			if attempts[i] == 0 && c.ended > bound {
				t.Errorf("seed %d: caller %d (arrived %v) failed at %v, beyond its bound %v: %v", s.seed, i, c.arrive, c.ended, bound, c.err)
			}
		case errors.Is(c.err, context.Canceled):
			if c.cancelAt == 0 || c.ended != c.cancelAt {
				t.Errorf("seed %d: caller %d (cancel at %v) cancelled, returned at %v", s.seed, i, c.cancelAt, c.ended)
			}
		case errors.Is(c.err, context.DeadlineExceeded):
			// Every wait is weighed against the deadline before it
			// begins: none runs into it.
			t.Errorf("seed %d: caller %d (arrived %v) waited until its deadline %v (returned at %v):%s", s.seed, i, c.arrive, c.deadline, c.ended, desc())
		default:
			t.Errorf("seed %d: caller %d: status %d, %v", s.seed, i, c.status, c.err)
		}
		if c.deadline > 0 {
			for _, h := range hits {
				if h.caller == i && h.at >= c.deadline {
					t.Errorf("seed %d: caller %d sent at %v, at or after its deadline %v", s.seed, i, h.at, c.deadline)
				}
			}
			if c.ended > c.deadline {
				t.Errorf("seed %d: caller %d returned at %v, after its deadline %v", s.seed, i, c.ended, c.deadline)
			}
		}
		if c.cancelAt > 0 && c.ended > c.cancelAt {
			t.Errorf("seed %d: caller %d returned at %v, after its cancellation at %v", s.seed, i, c.ended, c.cancelAt)
		}
	}
}

func TestStressQueue(t *testing.T) {
	for seed := range uint64(40) {
		stressRun{seed: seed, wave1: 25, wave2: 15, cancelP: 0.3, refuseP: 0.3,
			interval: 200 * time.Millisecond, maxWait: 3 * time.Second}.run(t)
	}
}

func TestStressQueueRetries(t *testing.T) {
	for seed := range uint64(40) {
		stressRun{seed: seed, wave1: 20, wave2: 20, retries: 2, cancelP: 0.2, refuseP: 0.4,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second}.run(t)
	}
}

// Cancellations at the instants of turns, and without proactive pacing.
func TestStressQueueEdges(t *testing.T) {
	for seed := range uint64(30) {
		stressRun{seed: seed, wave1: 20, wave2: 10, retries: 1, cancelP: 0.5, refuseP: 0.3,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second, snap: 200 * time.Millisecond}.run(t)
		stressRun{seed: seed, wave1: 20, wave2: 10, cancelP: 0.4, refuseP: 0.3, reactive: true,
			interval: 200 * time.Millisecond, maxWait: 3 * time.Second, snap: 100 * time.Millisecond}.run(t)
	}
}

// Store calls that take a while (yielding the processor), so that callers
// cancelled or woken meet their line busy and leave through its holder.
func TestStressQueueBusyStore(t *testing.T) {
	for seed := range uint64(30) {
		stressRun{seed: seed, wave1: 20, wave2: 10, retries: 1, cancelP: 0.5, refuseP: 0.3, yield: true,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second, snap: 200 * time.Millisecond}.run(t)
	}
}

// Arrivals together, at the instants of turns and cancellations, with store
// calls that yield the processor: requests that find no request of their
// Transport in a line ask for their turns without it while others join
// the line, holds begin and callers are cancelled.
func TestStressQueueArrivalsTogether(t *testing.T) {
	for seed := range uint64(30) {
		stressRun{seed: seed, wave1: 10, wave2: 30, retries: 1, cancelP: 0.4, refuseP: 0.3, yield: true,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second, snap: 200 * time.Millisecond, arriveSnap: 200 * time.Millisecond}.run(t)
		stressRun{seed: seed, wave1: 10, wave2: 30, retries: 2, cancelP: 0.3, refuseP: 0.4, yield: true,
			interval: 100 * time.Millisecond, maxWait: 2 * time.Second, snap: 100 * time.Millisecond, arriveSnap: 500 * time.Millisecond}.run(t)
	}
}

// Context deadlines, met in the queue, at the gate and between retries, and
// RateLimit fields saying no quota is left: every wait that would outlast a
// deadline fails at once, and the holds the fields set keep the arrivals
// at the gate.
func TestStressQueueDeadlines(t *testing.T) {
	for seed := range uint64(30) {
		stressRun{seed: seed, wave1: 20, wave2: 20, retries: 2, cancelP: 0.2, refuseP: 0.3, deadlineP: 0.5,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second}.run(t)
		stressRun{seed: seed, wave1: 10, wave2: 30, retries: 1, cancelP: 0.2, refuseP: 0.2, deadlineP: 0.5, hintP: 0.2, yield: true,
			interval: 200 * time.Millisecond, maxWait: 2 * time.Second, snap: 200 * time.Millisecond, arriveSnap: 200 * time.Millisecond}.run(t)
	}
}
