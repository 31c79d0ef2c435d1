package logparse

import (
	"testing"
	"time"
)

// TestCLFISOTime: nginx's log_format with $time_iso8601 in place of
// $time_local ('$remote_addr - $remote_user [$time_iso8601] "$request"
// ...', a common change) writes the time in RFC 3339 between the
// brackets; every such line was malformed ("bad time"). It is read, its
// zone or Z kept, a fraction too; a time in neither form stays bad.
func TestCLFISOTime(t *testing.T) {
	for _, tc := range []struct {
		stamp string
		want  time.Time
	}{
		{"2024-03-10T13:00:01+01:00", time.Date(2024, 3, 10, 12, 0, 1, 0, time.UTC)},
		{"2024-03-10T12:00:01Z", time.Date(2024, 3, 10, 12, 0, 1, 0, time.UTC)},
		{"2024-03-10T12:00:01.250-00:30", time.Date(2024, 3, 10, 12, 30, 1, 250e6, time.UTC)},
		{"10/Mar/2024:13:00:01 +0100", time.Date(2024, 3, 10, 12, 0, 1, 0, time.UTC)},
	} {
		line := `192.0.2.1 - - [` + tc.stamp + `] "GET / HTTP/1.1" 200 10 "-" "curl/8"`
		var e Entry
		var tcache timeCache
		var hs headerSlab
		if err := parseCLF(line, &tcache, &hs, &e); err != nil || !e.Time.Equal(tc.want) || e.Addr != "192.0.2.1" {
			t.Errorf("parseCLF(%q) = %v, time %v addr %q; want %v, 192.0.2.1", line, err, e.Time, e.Addr, tc.want)
		}
	}
	for _, stamp := range []string{"2024-03-10 12:00:01", "2024-03-10T25:00:01Z", "2024-03-10T12:00:01+24:00"} {
		line := `192.0.2.1 - - [` + stamp + `] "GET / HTTP/1.1" 200 10`
		var e Entry
		var tcache timeCache
		var hs headerSlab
		if err := parseCLF(line, &tcache, &hs, &e); err == nil || err.Error() != `bad time "`+stamp+`"` {
			t.Errorf("parseCLF(%q) = %v, want bad time", line, err)
		}
	}
}
