package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// benchClock moves 1µs forward at every reading and never waits, so a
// queue of 10^8 per second hardly ever makes a request wait (and then the
// wait is free).
type benchClock struct{ ns atomic.Int64 }

func (c *benchClock) Now() time.Time { return time.Unix(0, c.ns.Add(1000)) }

func (c *benchClock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// BenchmarkRetry measures one refused attempt and its retry (the clock does
// not wait): a request clone, a GetBody replay and a drained body.
func BenchmarkRetry(b *testing.B) {
	var n atomic.Int64
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		status := 200
		if n.Add(1)%2 == 1 {
			status = 429
		}
		return &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {"0"}}, Body: io.NopCloser(strings.NewReader("x")), Request: r}, nil
	})
	rt := mustTransport(b, next, client.WithClock(&benchClock{}), client.WithProactive(false))
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPut, "http://api.example.com/v1/thing", strings.NewReader("v=1"))
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(resp, err)
		}
	}
}

func mustTransport(b *testing.B, next http.RoundTripper, opts ...client.Option) *client.Transport {
	b.Helper()
	tr, err := client.New(next, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// stillClock stands still, and its Sleep waits for its context to end.
type stillClock struct{}

func (stillClock) Now() time.Time { return time.Unix(1_700_000_000, 0) }

func (stillClock) Sleep(ctx context.Context, d time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

// BenchmarkCancelAtGate measures n requests queued at the gate behind a
// server's long hold, then given up (their contexts cancelled, in the
// order they arrived), per request: each takes its place at the gate and
// leaves it. Giving a place up must not cost in proportion to the places
// left: n is swept to show the cost per request stays flat.
func BenchmarkCancelAtGate(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b.Error("a request was sent during the hold")
				return nil, context.Canceled
			})
			rt := mustTransport(b, next, client.WithClock(stillClock{}), client.WithRate(10, time.Second))
			for b.Loop() {
				rt.Observe("api.example.com", http.Header{"Retry-After": {"30"}}, stillClock{}.Now())
				cancels := make([]context.CancelFunc, n)
				var wg sync.WaitGroup
				for i := range n {
					ctx, cancel := context.WithCancel(context.Background())
					cancels[i] = cancel
					wg.Go(func() {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example.com/", nil)
						if _, err := rt.RoundTrip(req); err != context.Canceled {
							b.Error(err)
						}
					})
				}
				for rt.AtGate() < int64(n) {
					runtime.Gosched()
				}
				for _, cancel := range cancels {
					cancel()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/request")
		})
	}
}

// BenchmarkGateLeave measures the gate alone: n places taken at one key's
// gate and given up, the last first, per place. The cost per place stays
// flat as n grows.
func BenchmarkGateLeave(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			for b.Loop() {
				client.GateChurn(n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/place")
		})
	}
}
