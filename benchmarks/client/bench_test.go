package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratekeeper/ratekeeper/client"
)

// nopTransport answers every request with a canned 200, without a network,
// so the benchmarks measure the Transport alone.
type nopTransport struct{}

func (nopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// benchClock reads the real clock, as x/time/rate's Wait in the xrate case
// does (time.Now), and never waits: a queue of 10^8 per second hardly ever
// makes a request wait, and then the wait is free (a timer in real use), so
// the figures are the Transport's own cost. A clock that counted readings
// on a shared atomic instead would spare the Transport the clock read that
// xrate pays, and in parallel make both goroutines fight over one cache
// line that no real clock has.
type benchClock struct{}

func (*benchClock) Now() time.Time { return time.Now() }

func (*benchClock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// hintTransport answers like nopTransport with an IETF RateLimit field that
// leaves quota: the cost of reading the headers of every response.
type hintTransport struct{}

var hintHeader = http.Header{
	"Ratelimit-Policy": {`"per-second";q=10;w=1, "per-minute";q=100;w=60`},
	"Ratelimit":        {`"per-second";r=7;t=1, "per-minute";r=93;t=52`},
}

func (hintTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: hintHeader, Body: http.NoBody, Request: r}, nil
}

// BenchmarkRoundTrip measures what the Transport adds to a round trip that
// costs nothing: bare is the next RoundTripper alone; plain is the Transport
// without pacing (a hold lookup and a status check); paced adds a
// leaky_queue decision on the in-memory store; xrate is the same pacing done
// by hand with x/time/rate; hints is paced plus reading an IETF RateLimit
// field on every response.
func BenchmarkRoundTrip(b *testing.B) {
	cases := []struct {
		name string
		rt   func(b *testing.B) http.RoundTripper
	}{
		{"bare", func(*testing.B) http.RoundTripper { return nopTransport{} }},
		{"plain", func(b *testing.B) http.RoundTripper {
			return mustTransport(b, nopTransport{}, client.WithClock(&benchClock{}))
		}},
		{"paced", func(b *testing.B) http.RoundTripper {
			return mustTransport(b, nopTransport{}, client.WithClock(&benchClock{}), client.WithRate(100_000_000, time.Second), client.WithMaxWait(time.Second))
		}},
		{"xrate", func(*testing.B) http.RoundTripper {
			// The usual hand-made pacer, for comparison: x/time/rate's Wait
			// before each request (one process, no per-host queues).
			lim := rate.NewLimiter(rate.Limit(100_000_000), 100_000_000)
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if err := lim.Wait(r.Context()); err != nil {
					return nil, err
				}
				return nopTransport{}.RoundTrip(r)
			})
		}},
		{"hints", func(b *testing.B) http.RoundTripper {
			return mustTransport(b, hintTransport{}, client.WithClock(&benchClock{}), client.WithRate(100_000_000, time.Second), client.WithMaxWait(time.Second))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rt := c.rt(b)
			req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/v1/thing", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
			}
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			rt := c.rt(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/v1/thing", nil)
				for pb.Next() {
					resp, err := rt.RoundTrip(req)
					if err != nil || resp.StatusCode != 200 {
						b.Error(resp, err)
						return
					}
				}
			})
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustTransport(b *testing.B, next http.RoundTripper, opts ...client.Option) *client.Transport {
	b.Helper()
	tr, err := client.New(next, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}
