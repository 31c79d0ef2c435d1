package client

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Structured Field parser's work is linear in the number of
// parameters of an item: a server chooses how many it sends (serverHold
// reads no field over maxSFField, but the parser itself sets no limit).
func TestParseSFManyParamsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`"a";r=0;t=5`)
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(";k")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("=1")
	}
	type result struct {
		t  int64
		ok bool
	}
	done := make(chan result, 1)
	go func() {
		members, ok := parseSFList(b.String())
		if !ok || len(members) != 1 {
			done <- result{}
			return
		}
		tp, _ := members[0].item.param("t")
		done <- result{tp.num, true}
	}()
	select {
	case got := <-done:
		if !got.ok || got.t != 5 {
			t.Errorf("parseSFList: %+v, want t=5", got)
		}
	case <-time.After(10 * time.Second):
		// Linear work takes milliseconds, even under -race; quadratic
		// work on these 140,000 parameters takes minutes.
		t.Fatal("parseSFList of a 1 MiB List with 140,000 parameters took over 10 s")
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

// A RateLimit or RateLimit-Policy field longer than maxSFField is ignored
// without being parsed: parsing builds a member or parameter of some 70
// bytes for each 2 to 4 bytes of input, so a server sending megabytes of
// field (net/http accepts 10 MB of header) on every response would make each
// one cost hundreds of megabytes.
func TestServerHoldLongFieldIgnored(t *testing.T) {
	pad := func(n int) string { return strings.Repeat(`"a", `, n/5) }
	long := pad(1<<20) + `"z";r=0;t=5`
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"RateLimit just under the limit", header("RateLimit", pad(maxSFField-100)+`"z";r=0;t=5`), 5 * time.Second},
		{"RateLimit over the limit", header("RateLimit", long), 0},
		{"RateLimit over the limit in two lines", header("RateLimit", pad(maxSFField/2+10)+`"b"`, "RateLimit", pad(maxSFField/2+10)+`"z";r=0;t=5`), 0},
		{"draft-7 over the limit", header("RateLimit", strings.Repeat("a=0, ", 1<<18)+"remaining=0, reset=5"), 0},
		{"RateLimit-Policy over the limit", header("RateLimit", `"z";r=0`, "RateLimit-Policy", pad(1<<20)+`"z";q=1;w=5`), 0},
		{"RateLimit-Policy under the limit", header("RateLimit", `"z";r=0`, "RateLimit-Policy", pad(maxSFField-100)+`"z";q=1;w=5`), 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold = %v, want %v", got, tc.want)
			}
		})
	}
	// Memory: a 1 MiB field with half a million parameters.
	h := header("RateLimit", `"a";r=0;t=5`+strings.Repeat(";a", 1<<19))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	serverHold(h, now)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("serverHold of a 1 MiB RateLimit field allocated %d MB", n>>20)
	}
}
