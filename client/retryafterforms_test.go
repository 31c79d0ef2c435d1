package client_test

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// Retry-After comes in several forms (retry-after-ms, x-ms-retry-after-ms,
// Retry-After, X-Rate-Limit-Retry-After-Seconds), read the most precise
// first. One that asks for no wait ("0", a date past) is no usable one:
// it does not hide another form of the same response that asks for a
// wait (a gateway writing one form, the application behind it another),
// which is honoured as if alone. Two forms asking for a wait are read the
// most precise first, as before; when none asks for one, the backoff
// applies.
func TestZeroRetryAfterFormHidesNoOther(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kv     []string
		wait   time.Duration
		fromRA bool
	}{
		{"retry-after-ms 0, Retry-After 5", []string{"retry-after-ms", "0", "Retry-After", "5"}, 5 * time.Second, true},
		{"x-ms-retry-after-ms 0, Retry-After 5", []string{"x-ms-retry-after-ms", "0", "Retry-After", "5"}, 5 * time.Second, true},
		{"retry-after-ms 0, x-ms-retry-after-ms 3000", []string{"retry-after-ms", "0", "x-ms-retry-after-ms", "3000", "Retry-After", "9"}, 3 * time.Second, true},
		{"Retry-After 0, bucket4j 3", []string{"Retry-After", "0", "X-Rate-Limit-Retry-After-Seconds", "3"}, 4 * time.Second, true},
		{"retry-after-ms 0.0, Retry-After date", []string{"retry-after-ms", "0.0", "Retry-After", t0.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second, true},
		// Controls: the most precise form asking for a wait wins; none
		// asking for one is the backoff (1s here).
		{"retry-after-ms 1500, Retry-After 5", []string{"retry-after-ms", "1500", "Retry-After", "5"}, 1500 * time.Millisecond, true},
		{"all ask for none", []string{"retry-after-ms", "0", "x-ms-retry-after-ms", "0", "Retry-After", "0"}, time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuseOnce(clock, func(h http.Header, _ time.Time) {
				for i := 0; i+1 < len(tc.kv); i += 2 {
					h.Add(tc.kv[i], tc.kv[i+1])
				}
			}))
			var retries []client.Retry
			hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second),
				client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
			if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
				t.Fatalf("got %d %v, want 200", status, err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.wait}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
			if len(retries) != 1 || retries[0].Wait != tc.wait || retries[0].RetryAfter != tc.fromRA {
				t.Errorf("retries %+v, want one wait of %v, RetryAfter %v", retries, tc.wait, tc.fromRA)
			}
		})
	}
}

// A 403 refuses for rate when a form of its Retry-After asks for a wait,
// though another asks for none: it is retried after that wait, not
// returned as the server's answer.
func TestForbiddenZeroFormBesideAWait(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("retry-after-ms", "0")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "rate limited")
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock)
	if status, body, err := get(hc, srv.URL); err != nil || status != 200 || body != "ok" {
		t.Fatalf("got %d %q %v, want the retry's 200", status, body, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 5 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A 307 whose retry-after-ms asks for no wait and whose Retry-After asks
// for 2s: the redirected request waits the 2s (RFC 9110 §10.2.3).
func TestRedirectZeroFormBesideAWait(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			io.WriteString(w, "ok")
			return
		}
		w.Header().Set("retry-after-ms", "0")
		w.Header().Set("Retry-After", "2")
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	})
	hc, _ := newClient(t, clock)
	if status, _, err := get(hc, srv.URL+"/start"); err != nil || status != 200 {
		t.Fatalf("got %d %v, want 200", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v (the redirected request after the 2s Retry-After)", at, want)
	}
}
