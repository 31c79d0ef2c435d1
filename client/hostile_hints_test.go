package client

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A RateLimit field with a great many parameters on one member costs time
// linear in its length: a hostile server may send megabytes of header
// (net/http's default limit is 10 MB), on every response.
func TestServerHoldManyParamsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`"a";r=0;t=5`)
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(";k")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("=1")
	}
	h := header("RateLimit", b.String())
	done := make(chan time.Duration, 1)
	go func() { done <- serverHold(h, now) }()
	select {
	case got := <-done:
		if got != 5*time.Second {
			t.Errorf("serverHold = %v, want 5s", got)
		}
	case <-time.After(10 * time.Second):
		// Linear work takes milliseconds, even under -race; quadratic
		// work on these 140,000 parameters takes minutes.
		t.Fatal("serverHold of a 1 MiB RateLimit field with 140,000 parameters took over 10 s")
	}
}

// A repeated parameter's last value is its value (RFC 9651 §4.2.3.2).
func TestServerHoldRepeatedParam(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{`"a";r=0;t=5;t=9`, 9 * time.Second},
		{`"a";t=9;r=1;r=0`, 9 * time.Second},
		{`"a";r=0;t=5;r=1`, 0},
		{`"a";r=0;t=5;t=?1`, 0},
		{`"a";r=1;x=2;r=0;x=3;t=4`, 4 * time.Second},
	} {
		if got := serverHold(header("RateLimit", tc.v), now); got != tc.want {
			t.Errorf("serverHold(%s) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
