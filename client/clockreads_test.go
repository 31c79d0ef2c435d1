package client_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// countingClock reads the real clock, as a user's does, and counts its
// readings; it never waits.
type countingClock struct{ reads atomic.Int64 }

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return time.Now()
}

func (c *countingClock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// TestRoundTripClockReads pins how many times a request that meets
// no hold and no wait reads the Transport's clock. The Transport reads it
// once, for the instant the response arrived, when it reads the response's
// fields (with proactive pacing: the holds they announce run from that
// instant), and not at all before the request is sent; with pacing, the
// private in-memory store reads it once more, as it decides the turn (the
// store reads its clock once per call). Paths: plain (no pacing), paced (a
// turn from the in-memory leaky_queue), hints (paced, the response carrying
// RateLimit fields with quota left), and both without proactive pacing.
func TestRoundTripClockReads(t *testing.T) {
	hints := http.Header{
		"Ratelimit-Policy": {`"per-second";q=10;w=1, "per-minute";q=100;w=60`},
		"Ratelimit":        {`"per-second";r=7;t=1, "per-minute";r=93;t=52`},
	}
	paced := []client.Option{client.WithRate(100_000_000, time.Second), client.WithMaxWait(time.Second)}
	for _, tc := range []struct {
		name   string
		header http.Header
		opts   []client.Option
		want   int64
	}{
		{"plain", http.Header{}, nil, 1},
		{"paced", http.Header{}, paced, 2},
		{"hints", hints, paced, 2},
		{"not proactive", http.Header{}, []client.Option{client.WithProactive(false)}, 0},
		{"not proactive paced", http.Header{}, append([]client.Option{client.WithProactive(false)}, paced...), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Header: tc.header, Body: http.NoBody, Request: r}, nil
			})
			clock := &countingClock{}
			tr, err := client.New(next, append(tc.opts, client.WithClock(clock))...)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/v1/thing", nil)
			const n = 100
			clock.reads.Store(0)
			for range n {
				resp, err := tr.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatal(resp, err)
				}
			}
			if got := clock.reads.Load(); got != tc.want*n {
				t.Errorf("%d RoundTrips read the clock %d times (%.2f each), want %d each", n, got, float64(got)/n, tc.want)
			}
		})
	}
}

// TestRateLimited403ReadsTheClock checks that a 403 is told from its
// HTTP-date Retry-After at the instant it arrived where the Transport reads
// no instant for other responses (proactive pacing off, or a request with
// no key): the 403 asking for a wait of 2s is retried after 2s, not given
// up on as asking for one beyond the maximum.
func TestRateLimited403ReadsTheClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"not proactive", []client.Option{client.WithProactive(false)}},
		{"no key", []client.Option{client.WithKey(func(*http.Request) string { return "" })}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			var sent atomic.Int64
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if sent.Add(1) == 1 {
					h := http.Header{"Retry-After": {clock.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)}}
					return &http.Response{StatusCode: http.StatusForbidden, Header: h, Body: http.NoBody, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr, err := client.New(next, append(tc.opts, client.WithClock(clock))...)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/v1/thing", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || sent.Load() != 2 {
				t.Errorf("RoundTrip = %d after %d requests; want 200 after 2 (the 403 retried)", resp.StatusCode, sent.Load())
			}
			if got, want := clock.Sleeps(), []time.Duration{2 * time.Second}; len(got) != 1 || got[0] != want[0] {
				t.Errorf("slept %v; want %v", got, want)
			}
		})
	}
}
