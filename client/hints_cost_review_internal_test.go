package client

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A server chooses how many lines its header has (net/http's Transport
// accepts 10 MB of them), and the Transport reads the rate-limit fields of
// every response: the work grows in step with the lines, not with their
// square. draft-6's RateLimit-Reset, read as a Unix time from 10^9 on, is
// counted from the server's clock (its Date lines): those are read once,
// not once per reset member. Counted here in allocations (each invalid Date
// line costs some), which do not depend on the machine's speed: twice the
// lines, about twice the allocations, not four times.
func TestServerHoldCostLinearInLines(t *testing.T) {
	header := func(n int) http.Header {
		h := http.Header{"Ratelimit-Remaining": {"0"}}
		for range n {
			h.Add("Ratelimit-Reset", "1000000000")
			h.Add("Date", "not a date")
		}
		return h
	}
	now := time.Now()
	cost := func(n int) float64 {
		h := header(n)
		return testing.AllocsPerRun(3, func() { serverHold(h, now) })
	}
	small, large := cost(200), cost(400)
	if small == 0 || large > 3*small {
		t.Errorf("serverHold allocates %v times for 200 lines of each, %v for 400: want about twice as many, not four times", small, large)
	}
}

// A Retry-After line joined from several by a proxy is read member by
// member, and a server chooses how many members it sends: the members that
// cannot be a value (short words, a day name without a date after it) cost
// no date parsing and no allocation, and the valid one among them counts.
func TestRetryAfterMembersCostNoAllocations(t *testing.T) {
	for _, junk := range []string{"x,", "Sun,", "Sun, x,", "-1,"} {
		h := http.Header{"Retry-After": {strings.Repeat(junk, 10_000) + "5"}}
		now := time.Now()
		if d, ok := parseRetryAfter(h, now); !ok || d != 5*time.Second {
			t.Errorf("%q×10000 then 5: parseRetryAfter = %v, %v; want 5s, true", junk, d, ok)
		}
		if n := testing.AllocsPerRun(3, func() { parseRetryAfter(h, now) }); n > 10 {
			t.Errorf("%q×10000 then 5: %v allocations, want a few, not one per member", junk, n)
		}
	}
}
