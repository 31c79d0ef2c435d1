package client

import (
	"testing"
	"time"
)

// TestServerHoldMixedDraftsEdges: a List member of a mixed RateLimit
// field ends at OWS (spaces or tabs, RFC 9651) and a comma, and is read as
// one; a draft-7 reset that is no Integer (a bare key, Boolean true) is
// no reset, in a mixed field as in a draft-7 one: "remaining=0" alone
// says no wait.
func TestServerHoldMixedDraftsEdges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field string
		want  time.Duration
	}{
		{"a tab before the comma", "\"a\";r=0;t=7\t, remaining=0, reset=5", 7 * time.Second},
		{"draft-7, reset a bare key", `limit=5, remaining=0, reset`, 0},
		{"mixed, reset a bare key", `"a";r=1;t=9, remaining=0, reset`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(header("RateLimit", tc.field), now); got != tc.want {
				t.Errorf("serverHold(RateLimit: %q) = %v, want %v", tc.field, got, tc.want)
			}
		})
	}
}
