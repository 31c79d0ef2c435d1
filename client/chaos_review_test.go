package client_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A property run in virtual time (a synctest bubble: the Transport's
// default clock and the contexts' deadlines are the bubble's), with
// servers that take up to 50ms to answer, 150 callers on three hosts, and
// every seed its own options (pacing or not, proactive or not, retries,
// maximum wait and Retry-After, the error form), refusals of every kind
// (429, 503, 403; Retry-After in seconds, milliseconds or as an HTTP-date,
// beyond the cap or not, garbage, or beside a retry-after-ms of 0;
// RateLimit fields with t or with a policy's w, or draft-7's with a Unix
// reset; X-RateLimit with a Unix reset) and callers that cancel or
// have deadlines. What must always hold:
//
//   - pacing: with WithRate, no two requests to a host reach it less than
//     one interval apart;
//   - holds: with proactive pacing, no request reaches a host between a
//     refusal and the end of the wait it asked for (cut to the maximum
//     Retry-After);
//   - the maximum wait: no request is first sent later than twice its
//     maximum wait after it arrived (once for its turns, once for the
//     server's holds and probes);
//   - contexts: a caller whose context ends (cancelled, or its deadline)
//     has RoundTrip back by then;
//   - bodies: every response body is closed, and every attempt carries the
//     caller's request body whole.
//
// The first two caught a request handed a probe's role going without a
// turn, the third new turns each bounded on its own
// (TestHandedProbeTakesANewTurn, TestNewTurnWithinTheMaximumWaitLeft).
func TestPropertiesUnderChaos(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { chaos(t, seed) })
		})
	}
}

// chaosServer answers at random, and records what it received and sent.
type chaosServer struct {
	mu       sync.Mutex
	rnd      *rand.Rand
	sent     map[string][]time.Time // by host
	first    map[string]time.Time   // by caller
	refusals []chaosRefusal
	opened   int
	closed   int
	bodies   []string // the bodies that were not the caller's
}

// A chaosRefusal is a refusal of host, answered at back, asking for a wait
// until end.
type chaosRefusal struct {
	host      string
	back, end time.Time
}

func (s *chaosServer) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	caller := r.Header.Get("X-Caller")
	s.mu.Lock()
	now := time.Now()
	if want := r.Header.Get("X-Body"); string(body) != want {
		s.bodies = append(s.bodies, fmt.Sprintf("caller %s: body %q, want %q", caller, body, want))
	}
	s.sent[r.URL.Host] = append(s.sent[r.URL.Host], now)
	if _, ok := s.first[caller]; !ok {
		s.first[caller] = now
	}
	latency := time.Duration(s.rnd.IntN(50)) * time.Millisecond
	status := []int{200, 200, 200, 429, 503, 403}[s.rnd.IntN(6)]
	h := http.Header{}
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	var wait time.Duration // relative to the answer
	var until time.Time    // absolute
	switch s.rnd.IntN(12) {
	case 0:
		wait = time.Duration(s.rnd.IntN(4)) * time.Second
		h.Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
	case 1:
		wait = time.Duration(s.rnd.IntN(300)) * time.Second
		h.Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
	case 2:
		wait = time.Duration(s.rnd.IntN(3000)) * time.Millisecond
		h.Set("retry-after-ms", fmt.Sprint(int(wait/time.Millisecond)))
	case 3:
		wait = time.Duration(s.rnd.IntN(200)) * time.Second
		h.Set("RateLimit", fmt.Sprintf(`"a";r=0;t=%d`, int(wait/time.Second)))
	case 4:
		wait = time.Duration(1+s.rnd.IntN(100)) * time.Second
		h.Set("RateLimit", `"a";r=0`)
		h.Set("RateLimit-Policy", fmt.Sprintf(`"a";q=1;w=%d`, int(wait/time.Second)))
	case 5:
		until = time.Unix(now.Unix()+int64(s.rnd.IntN(120)), 0)
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", fmt.Sprint(until.Unix()))
	case 6:
		h.Set("Retry-After", "garbage")
	case 7:
		until = now.Add(time.Duration(s.rnd.IntN(200)) * time.Second).Truncate(time.Second)
		h.Set("Retry-After", until.UTC().Format(http.TimeFormat))
	case 8:
		// draft-7 with a Unix time for its reset, as servers that mix it
		// up with the legacy field send.
		until = time.Unix(now.Unix()+int64(s.rnd.IntN(120)), 0)
		h.Set("RateLimit", fmt.Sprintf("limit=1, remaining=0, reset=%d", until.Unix()))
	case 9:
		// A form of Retry-After asking for no wait beside one asking for
		// a wait: the wait counts.
		wait = time.Duration(s.rnd.IntN(4)) * time.Second
		h.Set("retry-after-ms", "0")
		h.Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
	}
	s.mu.Unlock()
	select {
	case <-time.After(latency):
	case <-r.Context().Done(): // as net/http's Transport does
		return nil, r.Context().Err()
	}
	back := time.Now()
	if until.IsZero() {
		until = back.Add(wait)
	}
	s.mu.Lock()
	s.opened++
	if status != http.StatusOK && until.After(back) {
		s.refusals = append(s.refusals, chaosRefusal{r.URL.Host, back, until})
	}
	s.mu.Unlock()
	return &http.Response{StatusCode: status, Header: h, Body: &countedBody{Reader: strings.NewReader("answer"), closed: &s.closed, mu: &s.mu}, Request: r}, nil
}

func chaos(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	srv := &chaosServer{rnd: rand.New(rand.NewPCG(seed, 2)), sent: map[string][]time.Time{}, first: map[string]time.Time{}}
	maxRA := time.Duration(rnd.IntN(30)) * time.Second
	maxWait := time.Duration(1+rnd.IntN(60)) * time.Second
	opts := []client.Option{client.WithMaxWait(maxWait), client.WithMaxRetryAfter(maxRA),
		client.WithBackoff(10*time.Millisecond, time.Second), client.WithRetries(rnd.IntN(5)),
		client.WithRandom(rand.NewPCG(seed, 3))}
	var interval time.Duration
	if rnd.IntN(2) == 0 {
		limit := 1 + rnd.IntN(20)
		interval = time.Second / time.Duration(limit)
		opts = append(opts, client.WithRate(int64(limit), time.Second))
	}
	proactive := rnd.IntN(4) != 0
	opts = append(opts, client.WithProactive(proactive))
	if rnd.IntN(3) == 0 {
		opts = append(opts, client.WithGiveUpError())
	}
	tr, err := client.New(srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("interval %v, proactive %v, max wait %v, max Retry-After %v", interval, proactive, maxWait, maxRA)
	var wg sync.WaitGroup
	arrived := make([]time.Time, 150)
	for i := range arrived {
		start := time.Duration(rnd.IntN(120000)) * time.Millisecond
		ttl := time.Duration(rnd.IntN(20000)) * time.Millisecond
		mode := rnd.IntN(4)
		host := fmt.Sprintf("h%d.example", rnd.IntN(3))
		wg.Go(func() {
			time.Sleep(start)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch mode {
			case 1:
				ctx, cancel = context.WithTimeout(ctx, ttl)
				defer cancel()
			case 2:
				timer := time.AfterFunc(ttl, cancel)
				defer timer.Stop()
			}
			var body io.Reader
			method, text := http.MethodGet, ""
			switch i % 3 {
			case 1: // replayed through GetBody
				method, text = http.MethodPut, "put "+fmt.Sprint(i)
				body = strings.NewReader(text)
			case 2: // not replayable: never retried
				method, text = http.MethodPost, "post "+fmt.Sprint(i)
				body = io.NopCloser(strings.NewReader(text))
			}
			req, _ := http.NewRequestWithContext(ctx, method, "http://"+host+"/", body)
			req.Header.Set("X-Caller", fmt.Sprint(i))
			req.Header.Set("X-Body", text)
			arrived[i] = time.Now()
			resp, err := tr.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if took := time.Since(arrived[i]); (mode == 1 || mode == 2) && took > ttl {
				t.Errorf("caller %d returned %v after it arrived, %v after its context ended (%v)", i, took, took-ttl, err)
			}
		})
	}
	wg.Wait()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, b := range srv.bodies {
		t.Error(b)
	}
	if srv.opened != srv.closed {
		t.Errorf("%d response bodies opened, %d closed", srv.opened, srv.closed)
	}
	for i, at := range arrived {
		if first, ok := srv.first[fmt.Sprint(i)]; ok && first.Sub(at) > 2*maxWait {
			t.Errorf("caller %d first sent %v after it arrived (%s)", i, first.Sub(at), config)
		}
	}
	if interval > 0 {
		for host, at := range srv.sent {
			for i := 1; i < len(at); i++ {
				if d := at[i].Sub(at[i-1]); d < interval {
					t.Errorf("%s: requests %d and %d sent %v apart (%s)", host, i-1, i, d, config)
				}
			}
		}
	}
	if proactive && maxRA > 0 {
		for _, r := range srv.refusals {
			end := r.back.Add(min(r.end.Sub(r.back), maxRA))
			for _, at := range srv.sent[r.host] {
				if at.After(r.back) && at.Before(end) {
					t.Errorf("%s: a request sent %v after a refusal asking to wait %v (%s)", r.host, at.Sub(r.back), end.Sub(r.back), config)
				}
			}
		}
	}
}
