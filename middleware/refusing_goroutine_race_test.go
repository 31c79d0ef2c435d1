package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestInnerMiddlewareOnDetachedGoroutine: a handler between two
// middlewares runs the rest of the chain on a goroutine of its own and
// answers without waiting for it (as http.TimeoutHandler does once its time
// is up, or a handler that goes on with the work in the background). The
// middleware further in reads the outer one's Result and header values,
// and answers its own 429s (telling the outer one), on that goroutine,
// while the outer one finishes with the request: the outer one counting
// every response, under a name of its own or the inner one's, or only
// some responses (CountIf), which gives back as its status is written and
// after its handler returned; or a middle one, sharing the name of a
// policy with one further out, that makes their members one as its status
// is written. Run under -race (it once reported the CountIf cases); the
// inner middleware decides as always: 204, then 429s.
//
// The middle one's cases are a known defect (see "Counting only some
// responses" in the package doc): making the members of a name one as its
// status is written, the middle middleware edits the outer one's header
// values, which the inner one reads on its goroutine; the race detector
// reports it. They run under -race only with RATEKEEPER_KNOWN_DEFECTS=1.
func TestInnerMiddlewareOnDetachedGoroutine(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	notFailed := policy.CountIf(func(_ *http.Request, status int) bool { return status < 500 })
	notAccepted := policy.CountIf(func(_ *http.Request, status int) bool { return status != http.StatusAccepted })
	for _, c := range []struct {
		name      string
		outerName string
		opts      []policy.Option
		middle    bool // a middleware between, with a policy of the outer one's name
	}{
		{"counting some responses", "outer", []policy.Option{notFailed}, false},
		{"counting some responses, the detaching handler's not", "outer", []policy.Option{notAccepted}, false},
		{"counting every response", "outer", nil, false},
		{"counting every response, a name shared", "inner", nil, false},
		{"a name shared with a middleware further out (known defect)", "outer", nil, true},
		{"a name shared with a middleware further out, counting some responses (known defect)", "outer", []policy.Option{notAccepted}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.middle && raceEnabled && os.Getenv("RATEKEEPER_KNOWN_DEFECTS") == "" {
				t.Skip("known defect (see \"Counting only some responses\" in the package doc): a middleware that shares a policy name with one further out edits that one's header values as its status is written, racing with a middleware further in that runs on a goroutine its handler does not wait for; set RATEKEEPER_KNOWN_DEFECTS=1 to run")
			}
			// A store each: the two middlewares share no lock of a
			// store, which would order their accesses for the race
			// detector when one's store call follows the other's.
			outerStore, _ := newStore(t)
			innerStore, _ := newStore(t)
			outer := middleware.MustNew(outerStore, []*policy.Policy{policy.Must(policy.Per(c.outerName, 100, time.Hour, key, c.opts...))})
			inner := middleware.MustNew(innerStore, []*policy.Policy{policy.Must(policy.Per("inner", 1, time.Hour, key))})
			ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			innerChain := inner.Handler(ok)
			finished := make(chan int, 1)
			detached := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r = r.WithContext(context.WithoutCancel(r.Context())) // the work goes on after the answer
				go func() {
					rec := httptest.NewRecorder()
					innerChain.ServeHTTP(rec, r)
					finished <- rec.Code
				}()
				w.WriteHeader(http.StatusAccepted) // not waiting for the goroutine
			})
			var served http.Handler = detached
			if c.middle {
				middleStore, _ := newStore(t)
				// Of another limit than the outer one's: decided again,
				// not left out as counted further out.
				middle := middleware.MustNew(middleStore, []*policy.Policy{policy.Must(policy.Per(c.outerName, 80, time.Hour, key, c.opts...))})
				served = middle.Handler(detached)
			}
			mux := http.NewServeMux()
			mux.Handle("GET /", outer.Handler(served))
			srv := httptest.NewServer(mux)
			defer srv.Close()

			// Each request gives the race detector a chance to see the two
			// unordered (its history of a word is short): 64 of them.
			var inners []int
			for range 64 {
				resp, err := srv.Client().Get(srv.URL + "/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					t.Fatalf("status %d, want 202 from the detaching handler", resp.StatusCode)
				}
				inners = append(inners, <-finished)
			}
			for i, code := range inners {
				if want := http.StatusTooManyRequests; i == 0 && code != http.StatusNoContent || i > 0 && code != want {
					t.Fatalf("inner status %d of request %d, want 204 for the first and 429 after", code, i)
				}
			}
		})
	}
}
