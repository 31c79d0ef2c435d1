package logparse

import (
	"reflect"
	"testing"
	"time"
)

// TestW3CPlusEncodedFields: IIS writes each space of a field as '+'
// (the fields are separated by spaces). It was undone in User-Agent and
// X-Forwarded-For only. A Cookie header of several cookies
// ("theme=dark;+lang=en") then held cookies named "+lang", so a
// cookie:lang key found none; a Forwarded list ("for=a,+for=b") held an
// element "+for=b" that no Forwarded reader takes; a user named "JOE
// BLOGGS" was keyed "JOE+BLOGGS", never the middleware's key. Now the
// spaces are back where a key reads them: every '+' of cs-username and
// of a Forwarded field (no address holds one), and in a Cookie field each
// '+' that follows a ';' (a cookie's value holds no space, and may hold a
// '+', as base64 does). cs-uri-query is kept as logged: it is the query
// as the client sent it (HTTP.sys refuses a space in the request line),
// whose '+' is the client's own.
func TestW3CPlusEncodedFields(t *testing.T) {
	const log = "#Software: Microsoft Internet Information Services 10.0\n" +
		"#Date: 2024-03-10 12:00:00\n" +
		"#Fields: date time c-ip cs-method cs-uri-stem cs-uri-query cs-username cs(Cookie) cs(Forwarded) cs(X-Tenant)\n" +
		"2024-03-10 12:00:00 192.0.2.1 GET /search q=a+b JOE+BLOGGS sid=ab+c/d==;+lang=en;++theme=dark for=203.0.113.7,+for=10.0.0.2 Acme+Corp\n"
	want := []Entry{{
		Time: time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), Addr: "192.0.2.1", User: "JOE BLOGGS", Method: "GET", Path: "/search", Query: "q=a+b",
		Headers: []Header{
			{Name: "Cookie", Value: "sid=ab+c/d==; lang=en;  theme=dark"},
			{Name: "Forwarded", Value: "for=203.0.113.7, for=10.0.0.2"},
			{Name: "X-Tenant", Value: "Acme+Corp"},
		},
	}}
	got, r := readW3C(t, log, Auto)
	if !reflect.DeepEqual(got, want) || r.MalformedCount() != 0 {
		t.Errorf("entries\n%+v\nwant\n%+v\n(malformed %v)", got, want, r.Samples())
	}
}

// TestW3CMidnightWithoutDate: in a layout without a date field, each time
// is on the day of the last #Date directive. A log running past midnight
// with no new #Date stayed on that day, so 00:00:01 came before the
// 23:59:59 logged just before it, a day back in time. Now a time more
// than 12 hours before the newest one since the #Date is on the next day
// (and the times after it too), and one less than an hour before the
// newest when taken on the day before is on that day (a slow request's
// line, logged when it ends, after the rollover). A small step back stays
// on the day, a step forward within the day too, and a new #Date
// directive, which IIS writes at rollover, sets the day as before.
func TestW3CMidnightWithoutDate(t *testing.T) {
	day := func(d, h, m, s int) time.Time { return time.Date(2024, 3, d, h, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		name, log string
		want      []time.Time
	}{
		{"no new #Date", "#Date: 2024-03-10 23:58:00\n#Fields: time c-ip cs-method cs-uri-stem\n" +
			"23:59:58 192.0.2.1 GET /\n" +
			"23:59:50 192.0.2.1 GET /\n" + // logged late, same day
			"00:00:01 192.0.2.1 GET /\n" + // the next day
			"23:59:59 192.0.2.1 GET /\n" + // logged late, the day before
			"00:00:02 192.0.2.1 GET /\n" +
			"13:00:00 192.0.2.1 GET /\n" + // still the next day
			"00:30:00 192.0.2.1 GET /\n", // and the day after
			[]time.Time{day(10, 23, 59, 58), day(10, 23, 59, 50), day(11, 0, 0, 1), day(10, 23, 59, 59), day(11, 0, 0, 2), day(11, 13, 0, 0), day(12, 0, 30, 0)}},
		{"new #Date at rollover", "#Date: 2024-03-10 23:58:00\n#Fields: time c-ip cs-method cs-uri-stem\n" +
			"23:59:58 192.0.2.1 GET /\n" +
			"#Date: 2024-03-11 00:00:00\n" +
			"00:00:01 192.0.2.1 GET /\n" +
			"23:59:59 192.0.2.1 GET /\n" + // logged late: the day before
			"#Date: 2024-03-11 00:00:02\n#Fields: time c-ip cs-method cs-uri-stem\n" +
			"00:00:02 192.0.2.1 GET /\n",
			[]time.Time{day(10, 23, 59, 58), day(11, 0, 0, 1), day(10, 23, 59, 59), day(11, 0, 0, 2)}},
		{"a date field", "#Date: 2024-03-10 23:58:00\n#Fields: date time c-ip cs-method cs-uri-stem\n" +
			"2024-03-10 23:59:58 192.0.2.1 GET /\n" +
			"2024-03-11 00:00:01 192.0.2.1 GET /\n" +
			"2024-03-10 00:00:02 192.0.2.1 GET /\n", // as logged
			[]time.Time{day(10, 23, 59, 58), day(11, 0, 0, 1), day(10, 0, 0, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r := readW3C(t, tc.log, Auto)
			if len(got) != len(tc.want) || r.MalformedCount() != 0 {
				t.Fatalf("%d entries, want %d (malformed %v)", len(got), len(tc.want), r.Samples())
			}
			for i, e := range got {
				if !e.Time.Equal(tc.want[i]) {
					t.Errorf("entry %d: %v, want %v", i, e.Time, tc.want[i])
				}
			}
		})
	}
}
