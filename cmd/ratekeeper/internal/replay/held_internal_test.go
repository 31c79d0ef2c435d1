package replay

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestHoldRoundTrip: a packed line unpacks to the entry it was (times
// are those a log may hold, 1970 to 2261: see logparse).
func TestHoldRoundTrip(t *testing.T) {
	zone := time.FixedZone("", 3600)
	for _, en := range []logparse.Entry{
		{Time: time.Date(2261, 12, 31, 23, 59, 59, 999_999_999, time.UTC), Method: "GET"},
		{Time: time.Date(2024, 3, 10, 12, 0, 0, 123, zone), Addr: "203.0.113.66", User: "user0", Method: "POST", Path: "/login", Query: "a=1", Proto: "HTTP/1.1", Status: 401, Referer: "-", UserAgent: "python-requests/2.31"},
		{Time: time.Unix(0, 0).UTC(), Addr: "::1", Path: "/", Headers: []logparse.Header{{Name: "X-User", Value: "ü"}}},
	} {
		h := hold(&en, 7)
		got := h.entry()
		if !got.Time.Equal(en.Time) || got.Time.Location().String() != en.Time.Location().String() {
			t.Errorf("time %v, want %v", got.Time, en.Time)
		}
		got.Time, en.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, en) {
			t.Errorf("unpacked %+v, want %+v", got, en)
		}
	}
}

// TestLineQueue: first in, first out across blocks, with back the last in,
// through random pushes and pops.
func TestLineQueue(t *testing.T) {
	var q lineQueue
	var want []uint64
	r := rand.New(rand.NewPCG(1, 2))
	seq := uint64(0)
	for range 200_000 {
		if len(want) == 0 || r.IntN(3) > 0 {
			q.push(held{seq: seq})
			want = append(want, seq)
			seq++
		} else {
			if got := q.front().seq; got != want[0] {
				t.Fatalf("front %d, want %d", got, want[0])
			}
			q.pop()
			want = want[1:]
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
}
