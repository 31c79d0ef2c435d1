package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestTimeZoneOffsetInRange: a UTC offset has hours 00 to 23 and minutes
// 00 to 59 (RFC 3339's time-numoffset; the Common Log Format's -0700
// likewise). Go's time.Parse takes hours up to 24 and minutes up to 60, so
// that a damaged or forged line stamped +2400 was replayed a whole day
// before its neighbours (late, and stretching the replay's span), and one
// stamped +0060 an hour off; such a line is malformed, its reason naming
// its time. Offsets in range, Z, and the extremes real zones use (-1200,
// +1400) stand.
func TestTimeZoneOffsetInRange(t *testing.T) {
	at := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line string
		want time.Time // zero: malformed
	}{
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1`, at},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 -1200] "GET / HTTP/1.1" 200 1`, at.Add(12 * time.Hour)},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +1400] "GET / HTTP/1.1" 200 1`, at.Add(-14 * time.Hour)},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +0545] "GET / HTTP/1.1" 200 1`, at.Add(-5*time.Hour - 45*time.Minute)},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +2400] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 -2400] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +0060] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +2460] "GET / HTTP/1.1" 200 1`, time.Time{}},
		{`{"time": "2024-03-10T12:00:00+05:30", "ip": "192.0.2.1"}`, at.Add(-5*time.Hour - 30*time.Minute)},
		{`{"time": "2024-03-10T12:00:00Z", "ip": "192.0.2.1"}`, at},
		{`{"time": "2024-03-10T12:00:00.25-03:00", "ip": "192.0.2.1"}`, at.Add(3*time.Hour + 250*time.Millisecond)},
		{`{"time": "2024-03-10T12:00:00+24:00", "ip": "192.0.2.1"}`, time.Time{}},
		{`{"time": "2024-03-10T12:00:00+23:60", "ip": "192.0.2.1"}`, time.Time{}},
		{`{"time": "2024-03-10 12:00:00+2400", "ip": "192.0.2.1"}`, time.Time{}},
		{`{"time": "[10/Mar/2024:12:00:00 +2400]", "ip": "192.0.2.1"}`, time.Time{}},
		{`{"time": "2024-03-10 12:00:00", "ip": "192.0.2.1"}`, at},
	} {
		r, err := NewReader(strings.NewReader(tc.line+"\n"), "a.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		switch {
		case tc.want.IsZero() && len(got) != 0:
			t.Errorf("%s: read at %v, want malformed", tc.line, got[0].Time.UTC())
		case tc.want.IsZero() && (len(r.Samples()) != 1 || !strings.Contains(r.Samples()[0].Reason, "time")):
			t.Errorf("%s: malformed %v, want one line whose reason names its time", tc.line, r.Samples())
		case !tc.want.IsZero() && (len(got) != 1 || !got[0].Time.Equal(tc.want)):
			t.Errorf("%s: %d entries %v (malformed %v), want one at %v", tc.line, len(got), got, r.Samples(), tc.want)
		}
	}
}
