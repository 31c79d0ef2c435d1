package client_test

import (
	"context"
	"io"
	"net/http"
	"strings"
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
