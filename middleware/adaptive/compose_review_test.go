package adaptive_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLoweredLevelThroughTheContract: at a level a Controller lowered
// (80% of 100 a minute, a client having used 30 at the configured limit),
// the middleware's contract holds for every kind but leaky_queue, through
// chi and a ServeMux, fed by SetFeedback: the decision in the request's
// context and RateLimit-Policy carry the level's limit; the 429 has
// Cache-Control no-store, a problem+json body naming the policy once,
// RateLimit r=0 with t at most Retry-After, and Retry-After is the wait:
// one second less is refused, Retry-After admitted. In shadow mode the
// requests over the level's limit are served, reported and fed to the
// Controller (their slow 503s lower the level again).
func TestLoweredLevelThroughTheContract(t *testing.T) {
	specs := append(windowKinds(100),
		algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute},
		algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 100, Window: time.Minute})
	for _, spec := range specs {
		for _, mux := range []string{"chi", "ServeMux"} {
			for _, shadow := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/shadow=%v", spec.Algorithm, mux, shadow)
				t.Run(name, func(t *testing.T) { loweredThroughContract(t, spec, mux, shadow) })
			}
		}
	}
}

func loweredThroughContract(t *testing.T, spec algorithms.Spec, mux string, shadow bool) {
	clock := algotest.NewClock(t0)
	var reported atomic.Int64
	var opts []middleware.Option
	if shadow {
		opts = append(opts, middleware.WithShadow(func(*http.Request, *middleware.Result) { reported.Add(1) }))
	}
	m := clockedMiddleware(t, clock, []*policy.Policy{policy.Must(policy.New("per-ip", spec, ip))}, opts...)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.SetFeedback(c)
	var limit atomic.Int64 // the decision's limit, read in the handler
	var failing atomic.Bool
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		if !ok || res.Len() != 1 {
			t.Errorf("no decision in the request's context")
			return
		}
		limit.Store(res.Decision(0).Limit)
		if failing.Load() {
			clock.Advance(30 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	h := routed(mux, app, m.Handler)
	send := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		return w
	}
	for range 30 {
		send()
	}
	period(t, c, clock, 100, 5, 30*time.Millisecond) // 0.8
	if c.Level() != 0.8 {
		t.Fatalf("level %v, want 0.8", c.Level())
	}
	if shadow {
		// Every request served; those over 80 reported; the slow 503s
		// of a period make it slow and failing: 0.64.
		failing.Store(true)
		served := 0
		for range 100 {
			if send().Code == http.StatusServiceUnavailable {
				served++
			}
		}
		if served != 100 || reported.Load() == 0 {
			t.Errorf("shadow: %d of 100 served, %d reported; want 100, some", served, reported.Load())
		}
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if c.Level() != 0.64 {
			t.Errorf("shadow: level %v after a period of slow 503s, want 0.64", c.Level())
		}
		return
	}
	var w *httptest.ResponseRecorder
	for range 200 {
		if w = send(); w.Code != http.StatusOK {
			break
		}
		if got := limit.Load(); got != 80 {
			t.Fatalf("the decision's limit %d, want 80", got)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"per-ip";q=80;w=60` {
			t.Fatalf("RateLimit-Policy %q, want q=80", got)
		}
	}
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("%d, want 429 before 200 requests", w.Code)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q", got)
	}
	if got := w.Header().Get("Content-Type"); got != "application/problem+json" {
		t.Errorf("Content-Type %q", got)
	}
	var body struct {
		Type     string   `json:"type"`
		Status   int      `json:"status"`
		Violated []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	if body.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" || body.Status != 429 ||
		!reflect.DeepEqual(body.Violated, []string{"per-ip"}) {
		t.Errorf("body %s", w.Body.String())
	}
	ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	var r, tt int
	if _, err := fmt.Sscanf(w.Header().Get("RateLimit"), `"per-ip";r=%d;t=%d`, &r, &tt); err != nil || r != 0 || tt > ra {
		t.Errorf("RateLimit %q with Retry-After %d: want r=0, t at most Retry-After", w.Header().Get("RateLimit"), ra)
	}
	clock.Advance(time.Duration(ra-1) * time.Second)
	if ra > 1 {
		if got := send().Code; got != http.StatusTooManyRequests {
			t.Errorf("%d s after the 429 with Retry-After %d: %d, want 429", ra-1, ra, got)
		}
	}
	clock.Advance(time.Second)
	if got := send().Code; got != http.StatusOK {
		t.Errorf("Retry-After (%d s) after the 429: %d, want 200", ra, got)
	}
}
