package client

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
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
	// Linear work takes milliseconds, even under -race; quadratic work on
	// these 140,000 parameters takes minutes.
	got := hangguard.Await(t, done, 10*time.Second, "parseSFList of a 1 MiB List with 140,000 parameters did not return")
	if !got.ok || got.t != 5 {
		t.Errorf("parseSFList: %+v, want t=5", got)
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
	// n bytes of members of 80 bytes, fewer than maxSFMembers.
	pad := func(n int) string { return strings.Repeat(`"`+strings.Repeat("a", 76)+`", `, n/80) }
	long := pad(1<<20) + `"z";r=0;t=5`
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"RateLimit just under the limit", header("RateLimit", pad(maxSFField-100)+`"z";r=0;t=5`), 5 * time.Second},
		{"RateLimit over the limit", header("RateLimit", long), 0},
		{"RateLimit over the limit in two lines", header("RateLimit", pad(maxSFField/2+100)+`"b"`, "RateLimit", pad(maxSFField/2+100)+`"z";r=0;t=5`), 0},
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

// A field within maxSFField costs memory of the order of its length, not
// some 70 bytes for each parameter or member: a hostile server may send one
// with every response. RFC 9651 asks parsers to support Lists and
// Dictionaries of 1024 members and items of 256 parameters; a field with
// more members is ignored.
func TestServerHoldMemoryBounded(t *testing.T) {
	n := maxSFField - 40
	for _, tc := range []struct {
		name string
		v    string
		want time.Duration
	}{
		{"parameters", `"a";r=0;t=5` + strings.Repeat(`;a`, n/2), 5 * time.Second},
		{"members", strings.Repeat(`"a",`, n/4) + `"a";r=0;t=5`, 0},
		{"draft-7 members", strings.Repeat(`a,`, n/2) + `remaining=0, reset=1`, 0},
		{"1024 members", strings.Repeat(`"a",`, 1023) + `"a";r=0;t=5`, 5 * time.Second},
		{"1025 members", strings.Repeat(`"a",`, 1024) + `"a";r=0;t=5`, 0},
		{"draft-7 1024 members", strings.Repeat(`a,`, 1022) + `remaining=0, reset=1`, time.Second},
		{"mixed members", strings.Repeat(`x=1,`, n/4) + `"a";r=0;t=5`, 0},
		{"mixed 1024 members", strings.Repeat(`x=1,`, 1022) + `"a";r=0;t=5, reset=1`, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header("RateLimit", tc.v)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := serverHold(h, now)
			runtime.ReadMemStats(&after)
			if got != tc.want {
				t.Errorf("serverHold = %v, want %v", got, tc.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 256<<10 {
				t.Errorf("serverHold of a %d-byte field allocated %d KiB", len(tc.v), a>>10)
			}
		})
	}
}

// FuzzParseSF checks that the Structured Field parser never panics, that a
// member's parameters are read back as they were checked, and that a List
// or Dictionary that parses has at most maxSFMembers members.
func FuzzParseSF(f *testing.F) {
	for _, s := range []string{
		`"a";r=0;t=5;t=9`, `a=1;x, b=?0, c=(1 "x";y);z`, `"a";  r=0`, `("a" "b");r=0`,
		`%"f%c3%bc"`, `:aGVsbG8=:;pk`, `@-12;a=1.5`, `"\\\""`, `*t/x:y;k=*`,
		`,, "a" ,`, `, a=1,,b ,`, `,`,
		`"a";r=0;t=5, remaining=0, reset=4`, `limit=1, "b";r=1, x;y=2, (1 2)=3`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var mixed int
		count := func(sfMember) { mixed++ }
		if ok := eachSFMixed(s, count, count); ok && mixed > maxSFMembers {
			t.Fatalf("%d mixed members", mixed)
		}
		for _, parse := range []func(string) ([]sfMember, bool){parseSFList, parseSFDict} {
			members, ok := parse(s)
			if ok && len(members) > maxSFMembers {
				t.Fatalf("%d members", len(members))
			}
			for _, m := range members {
				if m.item.params != "" && m.item.params[0] != ';' {
					t.Fatalf("params %q", m.item.params)
				}
				for _, k := range []string{"r", "t", "w", "a", "x"} {
					m.item.param(k)
				}
			}
		}
	})
}
