package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A 3xx's Retry-After is "the minimum time that the user agent is asked to
// wait before issuing the redirected request" (RFC 9110 §10.2.3). An
// http.Client follows a redirect at once, through the Transport, with the
// 3xx as the new request's Response: the Transport waits the Retry-After
// out before it sends the redirected request, in either form
// (delay-seconds, HTTP-date), to the same host or another.
func TestRedirectRetryAfterIsWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter func(now time.Time) string
		sameHost   bool
	}{
		{"delay-seconds, other host", func(time.Time) string { return "5" }, false},
		{"HTTP-date, other host", func(now time.Time) string { return now.Add(5 * time.Second).UTC().Format(http.TimeFormat) }, false},
		{"delay-seconds, same host", func(time.Time) string { return "5" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			b := newStub(t, clock, nil)
			var a *stub
			a = newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/moved" {
					io.WriteString(w, "ok")
					return
				}
				target := b.URL + "/moved"
				if tc.sameHost {
					target = a.URL + "/moved"
				}
				w.Header().Set("Retry-After", tc.retryAfter(clock.Now()))
				http.Redirect(w, r, target, http.StatusTemporaryRedirect)
			})
			hc, _ := newClient(t, clock)
			status, body, err := get(hc, a.URL+"/start")
			if err != nil || status != 200 || body != "ok" {
				t.Fatalf("got %d %q %v, want the redirect target's 200", status, body, err)
			}
			got := b.arrivals()
			if tc.sameHost {
				got = a.arrivals()[1:]
			}
			if want := []time.Duration{5 * time.Second}; !slices.Equal(got, want) {
				t.Errorf("the redirected request arrived at %v, want %v (after the 307's Retry-After)", got, want)
			}
		})
	}
}

// A redirect's Retry-After is bounded as every wait a server asks for: one
// beyond the maximum (a hostile or buggy server's year) fails the
// redirected request at once, unsent, with a held *WaitError, rather than
// hold it; one past the context's deadline too, as a Deadline WaitError.
// Nothing ever sleeps.
func TestRedirectRetryAfterBounded(t *testing.T) {
	for _, tc := range []struct {
		name         string
		retryAfter   string
		deadline     time.Duration
		wantDeadline bool
	}{
		{"beyond the maximum", "31536000", 0, false},
		{"past the deadline", "30", 10 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			b := newStub(t, clock, nil)
			a := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tc.retryAfter)
				http.Redirect(w, r, b.URL+"/moved", http.StatusFound)
			})
			hc, _ := newClient(t, clock)
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
			resp, err := hc.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got %d, want a *WaitError", resp.StatusCode)
			}
			var we *client.WaitError
			if !errors.As(err, &we) || !we.Held || we.Deadline != tc.wantDeadline {
				t.Fatalf("got %v, want a held *WaitError (Deadline %v)", err, tc.wantDeadline)
			}
			if got := b.arrivals(); len(got) != 0 {
				t.Errorf("the redirect target received requests at %v, want none", got)
			}
			if got := clock.Sleeps(); len(got) != 0 {
				t.Errorf("slept %v, want no sleep", got)
			}
		})
	}
}

// WithMaxWait bounds the waits for a server's holds "all of them
// together": a redirected request that waited out its 307's Retry-After
// (6s) counts that wait with the hold its host set meanwhile (the 307's
// RateLimit, no quota for 12s): 12s in all, beyond a maximum wait of 10s,
// is a held *WaitError, the request unsent, not a send at 12s.
func TestRedirectRetryAfterCountsWithHolds(t *testing.T) {
	clock := newAutoClock()
	var a *stub
	a = newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Retry-After", "6")
		w.Header().Set("RateLimit", `"default";r=0;t=12`)
		http.Redirect(w, r, a.URL+"/moved", http.StatusTemporaryRedirect)
	})
	hc, _ := newClient(t, clock, client.WithMaxWait(10*time.Second))
	resp, err := hc.Get(a.URL + "/start")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d, want a held *WaitError", resp.StatusCode)
	}
	var we *client.WaitError
	if !errors.As(err, &we) || !we.Held || we.Wait != 12*time.Second {
		t.Fatalf("got %v, want a held *WaitError of 12s", err)
	}
	if got := a.arrivals(); len(got) != 1 {
		t.Errorf("the host received requests at %v, want the first alone", got)
	}
}
