package logparse

import (
	"os"
	"testing"
)

// TestSamples reads the sample logs of testdata whole, in the format
// detected: every line is an entry or a directive, none malformed.
func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		file    string
		entries int
		check   func(t *testing.T, es []Entry)
	}{
		// IIS, default fields, then a layout with the X-Forwarded-For
		// custom field (CRLF line ends, as IIS writes them).
		{"iis_w3c.log", 8, func(t *testing.T, es []Entry) {
			if e := es[1]; e.Method != "POST" || e.Path != "/login" || e.Status != 401 || e.UserAgent != "Mozilla/5.0 (Windows NT 10.0; Win64; x64)" {
				t.Errorf("entry 2: %+v", e)
			}
			if e := es[6]; e.Addr != "10.0.0.9" || e.Proto != "HTTP/1.1" || len(e.Headers) != 1 || e.Headers[0].Value != "198.51.100.23, 203.0.113.7" {
				t.Errorf("entry 7: %+v", e)
			}
		}},
		// CloudFront's standard log: tabs, URL-encoded user agents; the
		// X-Forwarded-For header CloudFront sends the origin, c-ip
		// appended to the viewer's own.
		{"cloudfront_w3c.log", 3, func(t *testing.T, es []Entry) {
			if e := es[0]; len(e.Headers) != 2 || e.Headers[1] != (Header{"X-Forwarded-For", "192.0.2.5"}) {
				t.Errorf("entry 1: %+v", e)
			}
			if e := es[1]; e.Addr != "192.0.2.5" || e.Path != "/api/login" || e.Query != "next=/" || e.UserAgent != "Mozilla/5.0 (X11; Linux x86_64)" {
				t.Errorf("entry 2: %+v", e)
			}
			if e := es[2]; e.Status != 0 || len(e.Headers) != 2 || e.Headers[1] != (Header{"X-Forwarded-For", "203.0.113.9, 198.51.100.4"}) {
				t.Errorf("entry 3: %+v", e)
			}
		}},
		// Apache's "%{X-Forwarded-For}i %l %u %t ..." behind a proxy.
		{"apache_xff.log", 6, func(t *testing.T, es []Entry) {
			if e := es[2]; e.Addr != "10.0.0.3" || e.User != "ann" || len(e.Headers) != 1 || e.Headers[0].Value != "198.51.100.23, 203.0.113.7, 10.0.0.3" {
				t.Errorf("entry 3: %+v", e)
			}
			if e := es[3]; e.Addr != "203.0.113.8" || len(e.Headers) != 1 || e.Headers[0] != (Header{"X-Forwarded-For", "203.0.113.8"}) {
				t.Errorf("entry 4: %+v", e)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := NewReader(f, tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			es := readAll(t, r)
			if len(es) != tc.entries || r.MalformedCount() != 0 {
				t.Fatalf("%d entries, %d malformed (%v); want %d and none", len(es), r.MalformedCount(), r.Samples(), tc.entries)
			}
			tc.check(t, es)
		})
	}
}
