package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// An interop server is a real middleware (one global key per policy) behind
// httptest.NewServer, on the test's clock (its Date, LegacyUnix resets and
// leaky_queue holds too), recording for every response the instant it was
// written, its status and its header.
type interopServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []interopResponse
}

type interopResponse struct {
	at     time.Time // the clock when the response was written
	status int
	header http.Header
}

func newInteropServer(t *testing.T, clock *fakeClock, store algorithms.Store, specs []algorithms.Spec, opts ...middleware.Option) *interopServer {
	t.Helper()
	return newNestedServer(t, clock, store, [][]algorithms.Spec{specs}, opts...)
}

// newNestedServer is newInteropServer with a middleware for each element
// of nested, the first outermost, each with its own policies (named
// m<i>p<j>) and the same options, sharing the store.
func newNestedServer(t *testing.T, clock *fakeClock, store algorithms.Store, nested [][]algorithms.Spec, opts ...middleware.Option) *interopServer {
	t.Helper()
	if store == nil {
		mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		store = mem
	}
	opts = append([]middleware.Option{middleware.WithClock(clock), middleware.WithWait(clock.Sleep)}, opts...)
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for mi := len(nested) - 1; mi >= 0; mi-- {
		var ps []*policy.Policy
		for i, spec := range nested[mi] {
			name := fmt.Sprintf("p%d", i)
			if len(nested) > 1 {
				name = fmt.Sprintf("m%dp%d", mi, i)
			}
			p, err := policy.New(name, spec, keyfunc.Global())
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		m, err := middleware.New(store, ps, opts...)
		if err != nil {
			t.Fatal(err)
		}
		h = m.Handler(h)
	}
	s := &interopServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", clock.Now().UTC().Format(http.TimeFormat))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		s.mu.Lock()
		s.seen = append(s.seen, interopResponse{at: clock.Now(), status: rec.status, header: w.Header().Clone()})
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *interopServer) responses() []interopResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]interopResponse(nil), s.seen...)
}

var (
	ietfMember = regexp.MustCompile(`^"([^"]+)";r=(\d+);t=(\d+)(?:;pk=:[A-Za-z0-9+/=]+:)?$`)
	draft7Dict = regexp.MustCompile(`^limit=(\d+), remaining=(\d+), reset=(\d+)$`)
)

// advertisedHold reads, as the middleware's profile p defines its fields
// (and independently of the client's parser), how long a client that has
// just received h at now must hold its next request: the reset of a policy
// with no quota left, 0 when every policy has some. It fails the test on a
// field that is not in p's form.
func advertisedHold(t *testing.T, p middleware.Profile, h http.Header, now time.Time) time.Duration {
	t.Helper()
	atoi := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %q is no number", p, s)
		}
		return n
	}
	one := func(name string) int64 {
		vs := h.Values(name)
		if len(vs) != 1 {
			t.Fatalf("%s: %s = %q, want one line", p, name, vs)
		}
		return atoi(vs[0])
	}
	var hold time.Duration
	switch p {
	case middleware.IETF:
		lines := h.Values("RateLimit")
		if len(lines) == 0 {
			t.Fatalf("%s: no RateLimit field in %v", p, h)
		}
		for _, line := range lines {
			for _, m := range strings.Split(line, ", ") {
				sm := ietfMember.FindStringSubmatch(m)
				if sm == nil {
					t.Fatalf("%s: RateLimit member %q", p, m)
				}
				if atoi(sm[2]) == 0 {
					hold = max(hold, time.Duration(atoi(sm[3]))*time.Second)
				}
			}
		}
	case middleware.Draft7:
		vs := h.Values("RateLimit")
		if len(vs) != 1 {
			t.Fatalf("%s: RateLimit = %q", p, vs)
		}
		sm := draft7Dict.FindStringSubmatch(vs[0])
		if sm == nil {
			t.Fatalf("%s: RateLimit = %q", p, vs[0])
		}
		if atoi(sm[2]) == 0 {
			hold = time.Duration(atoi(sm[3])) * time.Second
		}
	case middleware.Draft6:
		if one("RateLimit-Remaining") == 0 {
			hold = time.Duration(one("RateLimit-Reset")) * time.Second
		}
	case middleware.Legacy:
		if one("X-RateLimit-Remaining") == 0 {
			hold = time.Duration(one("X-RateLimit-Reset")) * time.Second
		}
	case middleware.LegacyUnix:
		if one("X-RateLimit-Remaining") == 0 {
			hold = max(0, time.Unix(one("X-RateLimit-Reset"), 0).Sub(now))
		}
	default:
		t.Fatalf("profile %s", p)
	}
	return hold
}

var interopProfiles = []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}

// interopSpec returns a valid Spec of kind with limit per window.
func interopSpec(kind algorithms.Kind, limit int64, window time.Duration) algorithms.Spec {
	s := algorithms.Spec{Algorithm: kind, Limit: limit, Window: window}
	switch kind {
	case algorithms.SlidingBuckets:
		s.Buckets = 2
	case algorithms.LeakyQueue:
		s.MaxDelay = window / 2
	}
	return s
}

// A client that only listens (no pacing of its own, no retries) reads
// every profile the middleware writes, for every algorithm kind, alone and
// stacked with a second, longer policy: after each response it holds its
// next request exactly as long as the response's fields announce (no
// shorter, no longer), and the server, which sees no one else, refuses
// none of its requests. Without listening, the same traffic meets 429s
// (the control that shows the holds mattered; not for leaky_queue, a
// shaper that holds rather than refuses a lone client).
func TestInteropEveryProfileEveryKind(t *testing.T) {
	// The gaps the caller leaves before each request: bursts, and pauses
	// that end within a window.
	gaps := []time.Duration{0, 0, 0, 0, 0, 700 * time.Millisecond, 0, 0, 0, 0, 0, 0, 1300 * time.Millisecond, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for _, p := range interopProfiles {
		for _, kind := range algorithms.Kinds {
			for _, stacked := range []bool{false, true} {
				specs := []algorithms.Spec{interopSpec(kind, 3, 2*time.Second)}
				if stacked {
					specs = append(specs, interopSpec(kind, 7, 10*time.Second))
				}
				t.Run(fmt.Sprintf("%s/%s/stacked=%v", p, kind, stacked), func(t *testing.T) {
					var refusedWithout, held int
					for _, listen := range []bool{true, false} {
						clock := newAutoClock()
						srv := newInteropServer(t, clock, nil, specs, middleware.WithHeaders(p))
						hc, _ := newClient(t, clock, client.WithProactive(listen), client.WithRetries(0))
						var ready []time.Time
						for i, gap := range gaps {
							clock.Advance(gap)
							ready = append(ready, clock.Now())
							status, _, err := get(hc, srv.URL)
							if err != nil {
								t.Fatalf("listen=%v, request %d: %v", listen, i, err)
							}
							if !listen {
								if status == http.StatusTooManyRequests {
									refusedWithout++
								}
								continue
							}
							if status != http.StatusOK {
								t.Errorf("request %d: status %d, want 200 (the client knew the quota)", i, status)
							}
						}
						if !listen {
							continue
						}
						seen := srv.responses()
						if len(seen) != len(gaps) {
							t.Fatalf("server saw %d requests, want %d", len(seen), len(gaps))
						}
						for i := 1; i < len(seen); i++ {
							prev := seen[i-1]
							hold := min(advertisedHold(t, p, prev.header, prev.at), client.DefaultMaxRetryAfter)
							if hold > 0 {
								held++
							}
							want := ready[i]
							if end := prev.at.Add(hold); end.After(want) {
								want = end
							}
							// The request left at want; a leaky_queue hold at the
							// server came on top before its response.
							var serverHeld time.Duration
							if kind == algorithms.LeakyQueue {
								serverHeld = max(0, seen[i].at.Sub(want))
							}
							if got := seen[i].at.Add(-serverHeld); !got.Equal(want) {
								t.Errorf("request %d left at +%s, want +%s (previous response at +%s: %v)",
									i, got.Sub(t0), want.Sub(t0), prev.at.Sub(t0), prev.header)
							}
						}
					}
					if kind != algorithms.LeakyQueue && (refusedWithout == 0 || held == 0) {
						t.Errorf("%d responses announced a hold, and without listening the traffic met %d × 429: the test proves nothing", held, refusedWithout)
					}
				})
			}
		}
	}
}

// When traffic the client cannot see (another client, here a plain
// http.Client) spends the quota, the client meets a 429 from the
// middleware and retries it exactly the response's Retry-After later (in
// every profile, for every kind that refuses, stacked too), with its
// OnRetry told so, and that retry is admitted: the middleware's
// Retry-After is enough, and the client does not wait longer.
func TestInteropRetryAfterExact(t *testing.T) {
	for _, p := range interopProfiles {
		for _, kind := range algorithms.Kinds {
			if kind == algorithms.LeakyQueue {
				continue // a shaper: see TestInteropLeakyQueueFull
			}
			for _, stacked := range []bool{false, true} {
				specs := []algorithms.Spec{interopSpec(kind, 3, 2*time.Second)}
				if stacked {
					specs = append(specs, interopSpec(kind, 4, 10*time.Second))
				}
				t.Run(fmt.Sprintf("%s/%s/stacked=%v", p, kind, stacked), func(t *testing.T) {
					clock := newAutoClock()
					srv := newInteropServer(t, clock, nil, specs, middleware.WithHeaders(p))
					var retries []client.Retry
					hc, _ := newClient(t, clock, client.WithRandom(zeroSource{}),
						client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
					clock.Advance(300 * time.Millisecond) // off the whole second
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Fatalf("first request: %d %v", status, err)
					}
					// Another client spends the rest of the quota.
					other := &http.Client{}
					t.Cleanup(other.CloseIdleConnections)
					for i := 0; ; i++ {
						status, _, err := get(other, srv.URL)
						if err != nil || i > 10 {
							t.Fatalf("other client, request %d: %d %v", i, status, err)
						}
						if status == http.StatusTooManyRequests {
							break
						}
					}
					before := len(srv.responses())
					status, body, err := get(hc, srv.URL)
					if err != nil || status != 200 || body != "ok" {
						t.Fatalf("client: %d %q %v, want 200 after a retry", status, body, err)
					}
					seen := srv.responses()[before:]
					if len(seen) != 2 || seen[0].status != http.StatusTooManyRequests || seen[1].status != http.StatusOK {
						t.Fatalf("server answered the client %d times, want a 429 then a 200", len(seen))
					}
					ra, err := strconv.Atoi(seen[0].header.Get("Retry-After"))
					if err != nil || ra < 1 {
						t.Fatalf("429 Retry-After %q", seen[0].header.Get("Retry-After"))
					}
					if got, want := seen[1].at.Sub(seen[0].at), time.Duration(ra)*time.Second; got != want {
						t.Errorf("retry %s after the 429, want its Retry-After %s", got, want)
					}
					if len(retries) != 1 || !retries[0].RetryAfter || retries[0].Wait != time.Duration(ra)*time.Second || retries[0].Status != 429 {
						t.Errorf("OnRetry told %+v, want one retry after Retry-After %ds", retries, ra)
					}
				})
			}
		}
	}
}

// failingStore fails every Take, as a Redis store whose server is down.
type failingStore struct{}

func (failingStore) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, errors.New("store down")
}

// The middleware's fail-closed 503 carries a Retry-After in whole seconds
// (rounded up) and a problem+json body: the client retries a GET exactly
// that long after each refusal, DefaultRetries times, then returns the
// last 503 with its body intact (or a *RetryError with WithGiveUpError);
// a POST, which cannot be replayed, is sent once.
func TestInteropFailClosed(t *testing.T) {
	for _, giveUpError := range []bool{false, true} {
		t.Run(fmt.Sprintf("giveUpError=%v", giveUpError), func(t *testing.T) {
			clock := newAutoClock()
			specs := []algorithms.Spec{interopSpec(algorithms.TokenBucket, 5, time.Second)}
			srv := newInteropServer(t, clock, failingStore{}, specs,
				middleware.OnStoreError(middleware.FailClosed(1500*time.Millisecond)),
				middleware.WithErrorHandler(func(*http.Request, error) {}))
			opts := []client.Option{client.WithRandom(maxSource{})}
			if giveUpError {
				opts = append(opts, client.WithGiveUpError())
			}
			hc, _ := newClient(t, clock, opts...)
			resp, err := hc.Get(srv.URL)
			seen := srv.responses()
			if len(seen) != 1+client.DefaultRetries {
				t.Fatalf("server answered %d times, want %d", len(seen), 1+client.DefaultRetries)
			}
			for i, r := range seen {
				if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" {
					t.Fatalf("response %d: %d, Retry-After %q; want 503 with 2", i, r.status, r.header.Get("Retry-After"))
				}
				if i > 0 {
					if got := r.at.Sub(seen[i-1].at); got != 2*time.Second {
						t.Errorf("attempt %d came %s after the one before, want Retry-After's 2s", i+1, got)
					}
				}
			}
			if giveUpError {
				var re *client.RetryError
				if !errors.As(err, &re) || re.Attempts != 1+client.DefaultRetries || re.LastStatus != 503 || re.RetryAfter != 2*time.Second {
					t.Fatalf("error %v, want a RetryError of %d attempts, 503, Retry-After 2s", err, 1+client.DefaultRetries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != middleware.ContentTypeProblem ||
				!strings.Contains(string(body), `"status":503`) {
				t.Errorf("last response %d %q %q, want the 503 problem+json", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}

			// The key is now held for the 503's Retry-After: a POST waits
			// it out, is refused again and, not replayable, comes back.
			before := len(srv.responses())
			resp, err = hc.Post(srv.URL, "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if n := len(srv.responses()) - before; n != 1 || resp.StatusCode != 503 {
				t.Errorf("POST sent %d times, answered %d; want once, 503", n, resp.StatusCode)
			}
		})
	}
}

// A leaky_queue policy holds a request at the server rather than refuse
// it. Three callers at once fill a queue of 2 per 2s with a MaxDelay of
// 2s: they leave at 0, 1s and 2s, the last held 2s by the server, whose
// response says r=0 as decided, with its reset counted from after the hold
// (IETF: t=0, its quota grows now; the single-valued profiles: the second
// until the queue is empty). The client holds its next request exactly
// that long, and the middleware admits it, at the instant the queue frees
// (3s) at the earliest, in every profile.
func TestInteropLeakyQueueFull(t *testing.T) {
	for _, p := range interopProfiles {
		t.Run(p.String(), func(t *testing.T) {
			clock := newFakeClock()
			spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: 2 * time.Second, MaxDelay: 2 * time.Second}
			srv := newInteropServer(t, clock, nil, []algorithms.Spec{spec}, middleware.WithHeaders(p))
			hc, _ := newClient(t, clock)
			clock.drive(t, 3, func(i int) {
				if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
					t.Errorf("caller %d: %d %v", i, status, err)
				}
			})
			seen := srv.responses()
			last := seen[len(seen)-1]
			if got := last.at.Sub(t0); got != 2*time.Second {
				t.Fatalf("third caller answered at +%s, want +2s", got)
			}
			hold := advertisedHold(t, p, last.header, last.at)
			clock.drive(t, 1, func(int) {
				if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
					t.Errorf("fourth request: %d %v", status, err)
				}
			})
			seen = srv.responses()
			want, latest := last.at.Add(hold), t0.Add(3*time.Second)
			if want.After(latest) {
				latest = want
			}
			if got := seen[3].at; got.Before(want) || got.After(latest) {
				t.Errorf("fourth request answered at +%s; the hold announced at +2s ends at +%s, the queue frees at +3s", got.Sub(t0), want.Sub(t0))
			}
		})
	}
}

// Nested middlewares (an outer one with a long policy, an inner one with
// a short one, on one store) write their fields together: the IETF
// profile a RateLimit line each (here with partition keys), the
// single-valued profiles the values of the lowest remaining of both. A
// listening client reads them as one: it holds each next request exactly
// as announced and meets no 429.
func TestInteropNestedMiddlewares(t *testing.T) {
	gaps := []time.Duration{0, 0, 0, 0, 500 * time.Millisecond, 0, 0, 0, 0, 0, 2 * time.Second, 0, 0, 0, 0, 0, 0, 0}
	for _, p := range interopProfiles {
		for _, kind := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.SlidingLog} {
			t.Run(fmt.Sprintf("%s/%s", p, kind), func(t *testing.T) {
				clock := newAutoClock()
				nested := [][]algorithms.Spec{{interopSpec(kind, 6, 10*time.Second)}, {interopSpec(kind, 2, time.Second)}}
				srv := newNestedServer(t, clock, nil, nested, middleware.WithHeaders(p), middleware.WithPartitionKey([]byte("sixteen-byte-key")))
				hc, _ := newClient(t, clock, client.WithRetries(0))
				var ready []time.Time
				for i, gap := range gaps {
					clock.Advance(gap)
					ready = append(ready, clock.Now())
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Fatalf("request %d: %d %v", i, status, err)
					}
				}
				seen := srv.responses()
				held := 0
				for i := 1; i < len(seen); i++ {
					prev := seen[i-1]
					if p == middleware.IETF && (len(prev.header.Values("RateLimit")) != 2 || !strings.Contains(prev.header.Get("RateLimit"), ";pk=:")) {
						t.Fatalf("response %d: RateLimit %q, want a line of each middleware, with its pk", i-1, prev.header.Values("RateLimit"))
					}
					hold := advertisedHold(t, p, prev.header, prev.at)
					if hold > 0 {
						held++
					}
					want := ready[i]
					if end := prev.at.Add(hold); end.After(want) {
						want = end
					}
					if got := seen[i].at; !got.Equal(want) {
						t.Errorf("request %d left at +%s, want +%s (previous response at +%s: %v)", i, got.Sub(t0), want.Sub(t0), prev.at.Sub(t0), prev.header)
					}
				}
				if held == 0 {
					t.Errorf("no response announced a hold: the test proves nothing")
				}
			})
		}
	}
}

// Concurrent callers through a pacing Transport configured as the server
// (5 per second), in every profile, against every kind that admits a
// request every Window/Limit (see TestAgainstMiddlewareStrictKinds for the
// others): the holds the fields announce, whichever caller reads them
// first, only ever slow the client down, and the server refuses none.
func TestInteropConcurrentEveryProfile(t *testing.T) {
	for _, p := range interopProfiles {
		for _, spec := range []algorithms.Spec{
			{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second},
			{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 5},
			{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second},
			{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, Burst: 1},
			{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Second},
			{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: time.Second},
		} {
			t.Run(fmt.Sprintf("%s/%s", p, spec), func(t *testing.T) {
				clock := newFakeClock()
				srv := newInteropServer(t, clock, nil, []algorithms.Spec{spec}, middleware.WithHeaders(p))
				hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithRetries(0))
				clock.drive(t, 30, func(i int) {
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Errorf("caller %d: %d %v", i, status, err)
					}
				})
				seen := srv.responses()
				if len(seen) != 30 {
					t.Fatalf("server answered %d requests, want 30", len(seen))
				}
				if took := clock.Now().Sub(t0); took < 5800*time.Millisecond {
					t.Errorf("30 requests took %s, faster than 5 per second", took)
				}
			})
		}
	}
}
