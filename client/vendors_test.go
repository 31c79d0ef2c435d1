package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// Vendors' rate-limit signals beyond the IETF fields, end to end, each as
// its vendor documents it (see dialects.go for the sources).

// answerOnce answers the first request with status and the header lines kv
// (name, value, ...), the Date of the stub's clock unless kv sets one, and
// every later request with 200 "ok".
func answerOnce(status int, kv ...string) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 1 {
			io.WriteString(w, "ok")
			return
		}
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(status)
	}
}

// secondArrival sends two GETs through a Transport built with opts (and a
// backoff of 0, so that only what the server said makes anyone wait) to a
// server answering the first with status and the lines kv, and returns the
// instant the second request reached it: the retry's, when the first
// answer was retried, else the next call's.
func secondArrival(t *testing.T, status int, kv []string, opts ...client.Option) time.Duration {
	t.Helper()
	clock := newAutoClock()
	srv := newStub(t, clock, answerOnce(status, kv...))
	hc, _ := newClient(t, clock, append([]client.Option{client.WithRandom(zeroSource{}), client.WithMaxWait(time.Hour)}, opts...)...)
	got, _, err := get(hc, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got == status {
		// Not retried: the next call.
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	at := srv.arrivals()
	if len(at) != 2 {
		t.Fatalf("the server saw %d requests (%v), want 2", len(at), at)
	}
	return at[1]
}

// Discord sends, beside X-RateLimit-Remaining and an X-RateLimit-Reset in
// Unix seconds with a fraction, X-RateLimit-Reset-After: the seconds until
// the bucket resets, with a fraction ("64.57"), relative, so that no clock
// skew bends it. With no quota left the next request waits for it (the
// longer of the two forms when both are there); a Retry-After still wins
// on a 429; a malformed one holds nothing; none holds beyond
// WithMaxRetryAfter.
func TestDiscordResetAfter(t *testing.T) {
	epoch := func(d time.Duration) string {
		return strconv.FormatFloat(float64(t0.Add(d).UnixMilli())/1000, 'f', 3, 64)
	}
	for _, tc := range []struct {
		name   string
		status int
		kv     []string
		want   time.Duration
	}{
		// Reset-After alone (no X-RateLimit-Reset, which a proxy may drop,
		// or a server not send): before, nothing held.
		{"200 reset-after", http.StatusOK, []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "1.25", "X-RateLimit-Bucket", "abcd1234"}, 1250 * time.Millisecond},
		{"200 reset-after whole", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "2"}, 2 * time.Second},
		// Discord's documented response: both forms, agreeing.
		{"200 both forms", http.StatusOK, []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(2500 * time.Millisecond), "X-RateLimit-Reset-After", "2.5", "X-RateLimit-Bucket", "abcd1234"}, 2500 * time.Millisecond},
		// Two resets that disagree: the later counts.
		{"200 Unix reset later", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(4 * time.Second), "X-RateLimit-Reset-After", "1"}, 4 * time.Second},
		// The local clock two seconds ahead of the server's (its Date),
		// within the skew taken as in step: the Unix reset, counted from
		// the local clock, has passed; the relative one has not.
		{"200 local clock ahead", http.StatusOK, []string{"Date", t0.Add(-2 * time.Second).Format(http.TimeFormat), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(-500 * time.Millisecond), "X-RateLimit-Reset-After", "1.5"}, 1500 * time.Millisecond},
		// A 429 without Retry-After: the retry waits for the reset, not
		// for the backoff alone.
		{"429 reset-after", http.StatusTooManyRequests, []string{"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "3", "X-RateLimit-Scope", "user"}, 3 * time.Second},
		// Discord's documented 429s carry Retry-After, which wins.
		{"429 Retry-After wins", http.StatusTooManyRequests, []string{"Retry-After", "2", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "1.57", "X-RateLimit-Scope", "user"}, 2 * time.Second},
		{"429 global", http.StatusTooManyRequests, []string{"Retry-After", "4", "X-RateLimit-Global", "true", "X-RateLimit-Scope", "global"}, 4 * time.Second},
		// Quota left, or no remaining count: nothing to wait for.
		{"quota left", http.StatusOK, []string{"X-RateLimit-Remaining", "1", "X-RateLimit-Reset-After", "5"}, 0},
		{"no remaining", http.StatusOK, []string{"X-RateLimit-Reset-After", "5"}, 0},
		// Malformed: ignored.
		{"malformed word", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "soon"}, 0},
		{"malformed negative", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "-1"}, 0},
		{"malformed exponent", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "1e3"}, 0},
		// A relative form only: a billion seconds is no Unix time here,
		// but a wait beyond every cap, cut to WithMaxRetryAfter.
		{"capped", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "86400"}, time.Minute},
		{"capped huge", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "1700000000"}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secondArrival(t, tc.status, tc.kv); got != tc.want {
				t.Errorf("second request at %v, want %v", got, tc.want)
			}
		})
	}
}

// X-RateLimit-Bucket names a Discord limit shared by several routes; the
// Transport does not read it: a hold is on the request's key (the host by
// default, see WithKey), so a bucket spent on one route holds the other
// routes of its key too, cautious and never a 429 for it.
func TestDiscordBucketHoldsTheKey(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, answerOnce(http.StatusOK, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "2", "X-RateLimit-Bucket", "abcd1234"))
	hc, _ := newClient(t, clock)
	for _, path := range []string{"/channels/1/messages", "/guilds/2/members"} {
		if _, _, err := get(hc, srv.URL+path); err != nil {
			t.Fatal(err)
		}
	}
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// bucket4j-spring-boot-starter answers a refusal (429 by default) with
// X-Rate-Limit-Retry-After-Seconds, written as
// TimeUnit.NANOSECONDS.toSeconds of the wait: whole seconds, cut down, so
// "4" is a wait of 4 to 5 seconds and "0" one under a second (OpenSky's API
// documents the field: "how many seconds until credits/request become
// available again"). It is the server's word on the refusal, read as a
// Retry-After after every other form, to the end of the second it names:
// the retry never comes early, and the other requests of the key wait as
// for a Retry-After.
func TestBucket4jRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		kv     []string
		want   time.Duration
	}{
		{"429", http.StatusTooManyRequests, []string{"X-Rate-Limit-Retry-After-Seconds", "4"}, 5 * time.Second},
		{"429 under a second", http.StatusTooManyRequests, []string{"X-Rate-Limit-Retry-After-Seconds", "0"}, time.Second},
		{"429 with remaining", http.StatusTooManyRequests, []string{"X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Retry-After-Seconds", "2"}, 3 * time.Second},
		{"lower case", http.StatusTooManyRequests, []string{"x-rate-limit-retry-after-seconds", "1"}, 2 * time.Second},
		{"503", http.StatusServiceUnavailable, []string{"X-Rate-Limit-Retry-After-Seconds", "6"}, 7 * time.Second},
		// A 403 with it refuses for the rate (the starter's status is
		// configurable): retried as a 429.
		{"403", http.StatusForbidden, []string{"X-Rate-Limit-Retry-After-Seconds", "3"}, 4 * time.Second},
		// Retry-After, a standard field, wins; so do its millisecond forms.
		{"Retry-After wins", http.StatusTooManyRequests, []string{"Retry-After", "2", "X-Rate-Limit-Retry-After-Seconds", "9"}, 2 * time.Second},
		{"retry-after-ms wins", http.StatusTooManyRequests, []string{"retry-after-ms", "1500", "X-Rate-Limit-Retry-After-Seconds", "9"}, 1500 * time.Millisecond},
		// A malformed Retry-After is skipped: this field stands in.
		{"malformed Retry-After", http.StatusTooManyRequests, []string{"Retry-After", "soon", "X-Rate-Limit-Retry-After-Seconds", "2"}, 3 * time.Second},
		// Malformed: the backoff (0 here).
		{"malformed", http.StatusTooManyRequests, []string{"X-Rate-Limit-Retry-After-Seconds", "two"}, 0},
		{"negative", http.StatusTooManyRequests, []string{"X-Rate-Limit-Retry-After-Seconds", "-2"}, 0},
		// On a success it says nothing: no refusal, no wait.
		{"200", http.StatusOK, []string{"X-Rate-Limit-Retry-After-Seconds", "5"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secondArrival(t, tc.status, tc.kv); got != tc.want {
				t.Errorf("second request at %v, want %v", got, tc.want)
			}
		})
	}
}

// A refusal whose X-Rate-Limit-Retry-After-Seconds asks for more than
// WithMaxRetryAfter is given up on at once, as one with a Retry-After that
// long (OpenSky's anonymous quota answered 16841); the RetryError says so,
// with the wait read. A shorter one holds the key: a request arriving
// meanwhile waits for the same instant.
func TestBucket4jRetryAfterSecondsBounds(t *testing.T) {
	t.Run("too long", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, answerOnce(http.StatusTooManyRequests, "X-Rate-Limit-Retry-After-Seconds", "16841"))
		hc, _ := newClient(t, clock, client.WithGiveUpError())
		_, _, err := get(hc, srv.URL)
		var re *client.RetryError
		if !errors.As(err, &re) || re.Attempts != 1 || re.LastStatus != http.StatusTooManyRequests ||
			re.RetryAfter != 16842*time.Second || re.Reason != "Retry-After exceeds the maximum" {
			t.Fatalf("got %v (%+v), want a RetryError after 1 attempt, 429, Retry-After 4h40m42s, exceeding the maximum", err, re)
		}
		if n := len(srv.arrivals()); n != 1 {
			t.Errorf("the server saw %d requests, want 1", n)
		}
	})
	t.Run("holds the key", func(t *testing.T) {
		// Caller 0 is refused at 0s and retries at 4s; caller 1 comes at
		// 1s and waits for the same instant.
		holdsTheKey(t, answerOnce(http.StatusTooManyRequests, "X-Rate-Limit-Retry-After-Seconds", "3"), 4*time.Second)
	})
}

// Anthropic answers 529 overloaded_error when "the API is temporarily
// overloaded" across all its users; its SDKs retry it, as every status
// from 500 on, with a backoff, "honoring the retry-after header when
// present". A 529 is a refusal to back off from, as a 503 is: retried when
// the request can be replayed, after its Retry-After (which holds the other
// requests of its key) or the backoff; given up on as a 503 is.
func TestOverloaded529(t *testing.T) {
	t.Run("Retry-After", func(t *testing.T) {
		if got := secondArrival(t, 529, []string{"Retry-After", "2", "anthropic-ratelimit-requests-remaining", "49"}); got != 2*time.Second {
			t.Errorf("retry at %v, want 2s", got)
		}
	})
	t.Run("backoff", func(t *testing.T) {
		got := secondArrival(t, 529, []string{"Content-Type", "application/json"},
			client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second))
		if got != time.Second {
			t.Errorf("retry at %v, want 1s (the backoff)", got)
		}
	})
	t.Run("holds the key", func(t *testing.T) {
		holdsTheKey(t, answerOnce(529, "Retry-After", "3"), 3*time.Second)
	})
	t.Run("gives up", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(100, 529, func() string { return "1" }))
		hc, _ := newClient(t, clock, client.WithGiveUpError())
		_, _, err := get(hc, srv.URL)
		var re *client.RetryError
		if !errors.As(err, &re) || re.Attempts != 1+client.DefaultRetries || re.LastStatus != 529 || re.Reason != "retries exhausted" {
			t.Fatalf("got %v, want a RetryError of %d attempts, last status 529, retries exhausted", err, 1+client.DefaultRetries)
		}
	})
	t.Run("POST not replayed", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(100, 529, nil))
		hc, _ := newClient(t, clock)
		resp, err := hc.Post(srv.URL, "text/plain", io.NopCloser(strings.NewReader("x")))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 529 || len(srv.arrivals()) != 1 {
			t.Errorf("got %d after %d attempts, want the 529 after 1", resp.StatusCode, len(srv.arrivals()))
		}
	})
}

// Jira Cloud's 429s may carry X-RateLimit-Reset as "the timestamp (in ISO
// 8601 format) when the rate limit will reset ... in the format:
// yyyy-MM-ddTHH:mmZ", to the minute, without seconds: the reset falls
// within the minute it names, so the wait runs to that minute's end, never
// early. It reads unambiguously beside the numeric forms (delta-seconds,
// Unix seconds or milliseconds), which hold no "T" or ":", and beside RFC
// 3339, whose seconds are kept exact. Retry-After still wins.
func TestJiraMinuteReset(t *testing.T) {
	long := client.WithMaxRetryAfter(10 * time.Minute)
	for _, tc := range []struct {
		name   string
		status int
		kv     []string
		want   time.Duration
	}{
		// t0 is 12:00:00 UTC.
		{"next minute", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:01Z"}, 2 * time.Minute},
		{"this minute", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:00Z"}, time.Minute},
		{"offset", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T13:01+01:00"}, 2 * time.Minute},
		{"X-Rate-Limit", http.StatusOK, []string{"X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Reset", "2026-03-01T12:01Z"}, 2 * time.Minute},
		{"passed", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T11:59Z"}, 0},
		// With seconds it is RFC 3339, exact as before.
		{"RFC 3339 exact", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:01:00Z"}, time.Minute},
		{"quota left", http.StatusOK, []string{"X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "2026-03-01T12:01Z"}, 0},
		{"429 no Retry-After", http.StatusTooManyRequests, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:00Z"}, time.Minute},
		// Jira's documented 429: Retry-After, and the reset computed from
		// it, cut to the minute.
		{"429 Retry-After wins", http.StatusTooManyRequests, []string{"Retry-After", "30", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:00Z"}, 30 * time.Second},
		// Malformed: ignored.
		{"bad minute", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:61Z"}, 0},
		{"hour only", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12Z"}, 0},
		{"no zone", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2026-03-01T12:01"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secondArrival(t, tc.status, tc.kv, long); got != tc.want {
				t.Errorf("second request at %v, want %v", got, tc.want)
			}
		})
	}
}

// holdsTheKey serves two callers of one key from respond, whose first
// answer refuses the first caller with a wait; the second caller comes 1s
// later. Both must reach the server at retry: the first's retry and the
// second, held for the same instant.
func holdsTheKey(t *testing.T, respond func(int, http.ResponseWriter, *http.Request), retry time.Duration) {
	t.Helper()
	clock := newFakeClock()
	srv := newStub(t, clock, respond)
	hc, _ := newClient(t, clock)
	clock.drive(t, 2, func(i int) {
		if i == 1 {
			clock.Sleep(context.Background(), time.Second)
		}
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("caller %d: got %d %v", i, status, err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, retry, retry}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}
