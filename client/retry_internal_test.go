package client

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
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
