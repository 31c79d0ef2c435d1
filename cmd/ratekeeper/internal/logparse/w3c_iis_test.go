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
