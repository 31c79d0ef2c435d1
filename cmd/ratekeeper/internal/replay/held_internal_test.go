package replay

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestHoldRoundTrip: a packed line unpacks to the entry it was (times
// are those a log may hold, 1970 to 2261: see logparse).
func TestHoldRoundTrip(t *testing.T) {
	zone := time.FixedZone("", 3600)
	east := time.FixedZone("", 14*3600)
	west := time.FixedZone("-0930", -(9*3600 + 1800))
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	long := strings.Repeat("é", 32<<10) // 64 KiB, a whole line
	for _, en := range []logparse.Entry{
		{Time: time.Date(2261, 12, 31, 23, 59, 59, 999_999_999, time.UTC), Method: "GET"},
		{Time: time.Date(2024, 3, 10, 12, 0, 0, 123, zone), Addr: "203.0.113.66", User: "user0", Method: "POST", Path: "/login", Query: "a=1", Proto: "HTTP/1.1", Status: 401, Referer: "-", UserAgent: "python-requests/2.31"},
		{Time: time.Unix(0, 0).UTC(), Addr: "::1", Path: "/", Headers: []logparse.Header{{Name: "X-User", Value: "ü"}}},
		{Time: time.Unix(0, 0).In(east), Addr: "a", User: "b", Method: "c", Path: "d", Query: "e", Proto: "f", Status: 999, Referer: "g", UserAgent: "h"},
		{Time: time.Date(2261, 12, 31, 12, 0, 0, 1, west), UserAgent: long},
		{Time: time.Date(2024, 3, 10, 1, 59, 59, 0, ny), Referer: long, Status: 100}, // EST
		{Time: time.Date(2024, 3, 10, 3, 0, 0, 0, ny), Addr: long},                   // EDT
		{Time: time.Date(2024, 3, 10, 12, 0, 0, 5, time.Local), Path: "/ü%20"},
	} {
		h := hold(&en, 7)
		got := h.entry()
		gotName, gotOff := got.Time.Zone()
		wantName, wantOff := en.Time.Zone()
		if !got.Time.Equal(en.Time) || got.Time.Location() != en.Time.Location() || gotName != wantName || gotOff != wantOff || got.Time.String() != en.Time.String() {
			t.Errorf("time %v, want %v", got.Time, en.Time)
		}
		got.Time, en.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, en) {
			t.Errorf("unpacked %+v, want %+v", got, en)
		}
	}
}

// TestLineQueue: first in, first out across blocks, with back the last in,
// through random pushes and pops; the lines popped are let go (their slots
// cleared, in the first block and in the spare one).
func TestLineQueue(t *testing.T) {
	var q lineQueue
	let := func(when string) {
		t.Helper()
		var gone []held
		if len(q.blocks) > 0 {
			gone = q.blocks[0][:q.head]
		}
		for _, b := range [][]held{gone, q.spare[:cap(q.spare)]} {
			for i, h := range b {
				if h.loc != nil || h.text != "" {
					t.Fatalf("%s: line %d popped is still held: %+v", when, i, h)
				}
			}
		}
	}
	var want []uint64
	r := rand.New(rand.NewPCG(1, 2))
	seq := uint64(0)
	for range 200_000 {
		if len(want) == 0 || r.IntN(3) > 0 {
			q.push(held{seq: seq, loc: time.UTC, text: "x"})
			want = append(want, seq)
			seq++
		} else {
			if got := q.front().seq; got != want[0] {
				t.Fatalf("front %d, want %d", got, want[0])
			}
			q.pop()
			want = want[1:]
			if q.empty() || q.head%97 == 0 {
				let("popping")
			}
		}
		if q.empty() != (len(want) == 0) {
			t.Fatalf("empty %v with %d lines", q.empty(), len(want))
		}
		if len(want) > 0 && q.back().seq != want[len(want)-1] {
			t.Fatalf("back %d, want %d", q.back().seq, want[len(want)-1])
		}
	}
	for len(want) > 0 {
		if got := q.front().seq; got != want[0] {
			t.Fatalf("draining: front %d, want %d", got, want[0])
		}
		q.pop()
		want = want[1:]
	}
	if !q.empty() {
		t.Fatal("not empty after draining")
	}
	let("drained")
}
