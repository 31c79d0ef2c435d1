package client

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A refusal's body of up to 64 KiB is kept, read whole and replayed, for
// the caller to get should the retry give up before it is sent; one byte
// more and it is not kept (keep returns nil), its body closed either way.
func TestKeepBodyUpTo64KiB(t *testing.T) {
	for _, tc := range []struct {
		size int
		kept bool
	}{
		{0, true}, {1, true}, {64 << 10, true}, {64<<10 + 1, false}, {1 << 20, false},
	} {
		body := &closeCount{Reader: strings.NewReader(strings.Repeat("x", tc.size))}
		got := keep(&http.Response{Body: body})
		if body.closed != 1 {
			t.Errorf("%d bytes: body closed %d times, want 1", tc.size, body.closed)
		}
		if (got != nil) != tc.kept {
			t.Fatalf("%d bytes: keep = %v, want kept %v", tc.size, got, tc.kept)
		}
		if got == nil {
			continue
		}
		if b, err := io.ReadAll(got.Body); err != nil || len(b) != tc.size || !bytes.Equal(b, bytes.Repeat([]byte("x"), tc.size)) {
			t.Errorf("%d bytes: replayed %d bytes, %v", tc.size, len(b), err)
		}
	}
}

// closeCount is a body that counts its Close calls.
type closeCount struct {
	io.Reader
	closed int
}

func (c *closeCount) Close() error { c.closed++; return nil }

// A refusal without a body (nil, as a RoundTripper other than net/http's
// may return, or http.NoBody) is kept as it is: keep must not read a nil
// body.
func TestKeepNoBody(t *testing.T) {
	for _, body := range []io.ReadCloser{nil, http.NoBody} {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Body: body}
		if got := keep(resp); got != resp || got.Body != body {
			t.Errorf("keep(Body %v) = %v, want the response as it is", body, got)
		}
	}
}

// topSource is a random source at its largest value: each backoff is its
// ceiling.
type topSource struct{}

func (topSource) Uint64() uint64 { return math.MaxUint64 }

// The backoff's ceiling is min(max, base·2^(k−1)) for every retry k, even
// where base·2^(k−1) nears the largest Duration: with base 1ns and max
// 1.5·2^62ns, retry 63's is 2^62ns, and from retry 64 on (2^63ns would
// overflow) it is max.
func TestBackoffCeilingNearTheLargestDuration(t *testing.T) {
	const ceiling = 3 << 61
	tr, err := New(nil, WithBackoff(1, ceiling), WithRandom(topSource{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 1}, {2, 2}, {62, 1 << 61}, {63, 1 << 62}, {64, ceiling}, {65, ceiling}, {100, ceiling},
	} {
		if got := tr.backoff(tc.attempt); got != tc.want {
			t.Errorf("backoff(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
}
