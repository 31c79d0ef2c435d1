package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestLeapSecond: a time with a leap second, 23:59:60 (RFC 3339 allows it;
// a clock that steps through it logs it), is read as the instant after
// 23:59:59, not as a malformed line whose request the replay loses. Go's
// time.Parse refuses second 60. A second 60 elsewhere than in the seconds
// (a minute or an hour of 60) is still malformed.
func TestLeapSecond(t *testing.T) {
	want := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line string
		want time.Time // zero: malformed
	}{
		{`192.0.2.1 - - [31/Dec/2016:23:59:60 +0000] "GET / HTTP/1.1" 200 1`, want},
		{`192.0.2.1 - - [01/Jan/2017:00:59:60 +0100] "GET / HTTP/1.1" 200 1`, want},
		{`{"time": "2016-12-31T23:59:60Z", "ip": "192.0.2.1"}`, want},
		{`{"time": "2016-12-31T23:59:60.5Z", "ip": "192.0.2.1"}`, want.Add(500 * time.Millisecond)},
		{`{"time": "2016-12-31 23:59:60", "ip": "192.0.2.1"}`, want},
		{`192.0.2.1 - - [31/Dec/2016:23:60:00 +0000] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`{"time": "2016-12-31T23:60:59Z", "ip": "192.0.2.1"}`, time.Time{}},
		{`192.0.2.1 - - [31/Dec/2016:23:60:59 +0000] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`{"time": "2016-12-31T23:59:61Z", "ip": "192.0.2.1"}`, time.Time{}},
	} {
		r, err := NewReader(strings.NewReader(tc.line+"\n"), "a.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		switch {
		case tc.want.IsZero() && len(got) != 0:
			t.Errorf("%s: read at %v, want malformed", tc.line, got[0].Time)
		case !tc.want.IsZero() && (len(got) != 1 || !got[0].Time.Equal(tc.want)):
			t.Errorf("%s: %d entries %v (malformed %v), want one at %v", tc.line, len(got), got, r.Samples(), tc.want)
		}
	}
}
