package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/client"
)

// costlyServer answers every request as go-chi/httprate answers one whose
// cost (httprate.WithIncrement) exceeds its limit, through a chi router:
// 429 with X-RateLimit-Limit, X-RateLimit-Remaining (the quota left, all of
// it here), X-RateLimit-Increment (what the request costs, sent when above
// 1), X-RateLimit-Reset (the window's end, Unix seconds) and Retry-After
// (the window): rate+cost > limit whatever the rate. Each header is given
// as lines, nil for none.
func costlyServer(t *testing.T, clock *fakeClock, limit, increment []string) (*httptest.Server, *int) {
	t.Helper()
	n := 0
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			n++
			h := w.Header()
			h["X-Ratelimit-Limit"] = limit
			h["X-Ratelimit-Increment"] = increment
			h.Set("X-RateLimit-Remaining", "5")
			h.Set("X-RateLimit-Reset", strconv.FormatInt(clock.Now().Add(time.Minute).Unix(), 10))
			h.Set("Retry-After", "60")
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		})
	})
	r.Get("/", func(w http.ResponseWriter, req *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, &n
}

// A refusal whose rate-limit fields say the request costs more than the
// quota holds (httprate's X-RateLimit-Increment above its
// X-RateLimit-Limit) can never be admitted, whatever the wait: the
// Transport gives up at once, without waiting for the Retry-After and
// without retrying, and says so (a RetryError with that reason, or the
// 429 itself by default). It gives up only when that is certain: every
// increment line above every limit line, each a plain integer; else it
// retries as before.
func TestCostBeyondQuotaGivesUpAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name             string
		limit, increment []string
		attempts         int // 1: given up at once
	}{
		{"increment above limit", []string{"5"}, []string{"10"}, 1},
		{"limit 0", []string{"0"}, []string{"2"}, 1},
		{"every line above", []string{"5", "8"}, []string{"10", "9"}, 1},
		{"lines joined by a proxy", []string{"5, 8"}, []string{"9"}, 1},
		// Not certain: retried, each time after the Retry-After.
		{"increment within limit", []string{"10"}, []string{"10"}, 4},
		{"one limit line admits it", []string{"5", "20"}, []string{"10"}, 4},
		{"one increment line fits", []string{"5"}, []string{"10", "4"}, 4},
		{"no increment", []string{"5"}, nil, 4},
		{"no limit", nil, []string{"10"}, 4},
		{"limit with a window (draft-polli-03)", []string{"5, 5;w=1, 100;w=60"}, []string{"10"}, 4},
		{"limit not a number", []string{"five"}, []string{"10"}, 4},
		{"limit negative", []string{"-1"}, []string{"10"}, 4},
		{"increment not a number", []string{"5"}, []string{"ten"}, 4},
		{"increment decimal", []string{"5"}, []string{"10.5"}, 4},
		{"increment 0", []string{"0"}, []string{"0"}, 4},
		{"empty limit line", []string{"5", ""}, []string{"10"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, giveUpError := range []bool{false, true} {
				clock := newAutoClock()
				srv, n := costlyServer(t, clock, tc.limit, tc.increment)
				var retries []client.Retry
				opts := []client.Option{client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) })}
				if giveUpError {
					opts = append(opts, client.WithGiveUpError())
				}
				hc, _ := newClient(t, clock, opts...)
				status, _, err := get(hc, srv.URL+"/")
				if *n != tc.attempts || len(retries) != tc.attempts-1 {
					t.Fatalf("giveUpError %v: %d attempts, retries %+v; want %d attempts", giveUpError, *n, retries, tc.attempts)
				}
				if s := clock.Sleeps(); tc.attempts == 1 && len(s) != 0 {
					t.Errorf("giveUpError %v: slept %v, want no wait", giveUpError, s)
				}
				switch {
				case !giveUpError:
					if err != nil || status != http.StatusTooManyRequests {
						t.Errorf("got %d %v, want the 429", status, err)
					}
				default:
					want := "retries exhausted"
					if tc.attempts == 1 {
						want = "request costs more than the server's quota"
					}
					var re *client.RetryError
					if !errors.As(err, &re) || re.Attempts != tc.attempts || re.Reason != want || re.LastStatus != 429 || re.RetryAfter != time.Minute {
						t.Errorf("error %v, want a give-up after %d attempts: %s", err, tc.attempts, want)
					}
				}
			}
		})
	}
}
