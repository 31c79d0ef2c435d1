package logparse

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, r *Reader) []Entry {
	t.Helper()
	var out []Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// xffOf is the X-Forwarded-For header of one address, which an entry of a
// Common Log Format line whose first field is one IP address carries (see
// parseCLF).
func xffOf(addr string) []Header { return []Header{{Name: "X-Forwarded-For", Value: addr}} }

func TestCLF(t *testing.T) {
	tz := time.FixedZone("", -7*3600)
	for _, tc := range []struct {
		name, line string
		want       Entry
	}{
		{"common", `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "127.0.0.1", User: "frank", Method: "GET", Path: "/apache_pb.gif", Proto: "HTTP/1.0", Status: 200, Headers: xffOf("127.0.0.1")}},
		{"combined", `2001:db8::1 - - [10/Oct/2000:13:55:36 -0700] "POST /login?next=%2F HTTP/1.1" 429 - "http://example.com/" "curl/8.0 \"quoted\""`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "2001:db8::1", Method: "POST", Path: "/login", Query: "next=%2F", Proto: "HTTP/1.1", Status: 429, Referer: "http://example.com/", UserAgent: `curl/8.0 \"quoted\"`, Headers: xffOf("2001:db8::1")}},
		{"space in the target", `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a b?c d HTTP/1.1" 200 1`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "192.0.2.1", Method: "GET", Path: "/a b", Query: "c d", Proto: "HTTP/1.1", Status: 200, Headers: xffOf("192.0.2.1")}},
		{"HTTP/0.9", `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a b" 200 1`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "192.0.2.1", Method: "GET", Path: "/a b", Status: 200, Headers: xffOf("192.0.2.1")}},
		{"absolute form", `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET http://example.com/a/b HTTP/1.1" 200 1`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "192.0.2.1", Method: "GET", Path: "/a/b", Proto: "HTTP/1.1", Status: 200, Headers: xffOf("192.0.2.1")}},
		// The two other request-target forms of RFC 9112 3.2: replayed
		// (only the policies without routes apply), not malformed.
		{"asterisk form", `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "OPTIONS * HTTP/1.1" 204 0`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "192.0.2.1", Method: "OPTIONS", Path: "*", Proto: "HTTP/1.1", Status: 204, Headers: xffOf("192.0.2.1")}},
		{"authority form", `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "CONNECT example.com:443 HTTP/1.1" 200 0`,
			Entry{Time: time.Date(2000, 10, 10, 13, 55, 36, 0, tz), Addr: "192.0.2.1", Method: "CONNECT", Path: "example.com:443", Proto: "HTTP/1.1", Status: 200, Headers: xffOf("192.0.2.1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.line+"\n"), "a.log", Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) || !got[0].Time.Equal(tc.want.Time) {
				t.Errorf("entries = %+v\nwant %+v (malformed %v)", got, tc.want, r.Samples())
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	lines := []string{
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`,
		`garbage`,
		`192.0.2.1 - - [99/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "\x16\x03\x01" 400 1`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1`,
		`{"time": "nope"}`,
		``,
		strings.Repeat("x", 70<<10),
		`192.0.2.1 - - [10/Oct/2000:13:55:37 -0700] "GET /b HTTP/1.1" 200 1`,
	}
	r, err := NewReader(strings.NewReader(strings.Join(lines, "\n")), "m.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2 || got[1].Path != "/b" {
		t.Errorf("entries = %+v, want / and /b", got)
	}
	if r.MalformedCount() != 6 || r.Lines() != 9 {
		t.Errorf("malformed, lines = %d, %d; want 6, 9", r.MalformedCount(), r.Lines())
	}
	s := r.Samples()
	if len(s) != 5 || s[0].Line != 2 || !strings.Contains(s[1].Reason, "bad time") || !strings.Contains(s[2].Reason, "request line") {
		t.Errorf("samples = %v", s)
	}
}

func TestJSONLines(t *testing.T) {
	log := `{"ts": 1700000000.5, "remote_ip": "192.0.2.9", "method": "POST", "path": "/login", "user": "ann", "req": {"h": "abc"}}
{"time": "2023-11-14T22:13:21Z", "ip": "192.0.2.9", "uri": "/x?y=1"}
{"time": 1700000001000, "ip": "192.0.2.9"}
{"ip": "192.0.2.9"}
`
	r, err := NewReader(strings.NewReader(log), "j.log", Options{JSON: JSONFields{Headers: map[string]string{"X-Id": "req.h"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 3 {
		t.Fatalf("entries = %+v (malformed %v)", got, r.Samples())
	}
	if !got[0].Time.Equal(time.Unix(1700000000, 5e8)) || got[0].Addr != "192.0.2.9" || got[0].Method != "POST" || got[0].User != "ann" ||
		!reflect.DeepEqual(got[0].Headers, []Header{{"X-Id", "abc"}}) {
		t.Errorf("entry 0 = %+v", got[0])
	}
	if got[1].Path != "/x" || got[1].Query != "y=1" || got[1].Method != "GET" || !got[1].Time.Equal(time.Unix(1700000001, 0)) {
		t.Errorf("entry 1 = %+v", got[1])
	}
	if !got[2].Time.Equal(time.Unix(1700000001, 0)) {
		t.Errorf("entry 2 time = %v (milliseconds)", got[2].Time)
	}
	if r.MalformedCount() != 1 || !strings.Contains(r.Samples()[0].Reason, "no time field") {
		t.Errorf("malformed = %v", r.Samples())
	}
}

func TestGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`+"\n")
	zw.Close()
	n := int64(buf.Len())
	r, err := NewReader(&buf, "a.log.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 1 || got[0].Addr != "192.0.2.1" {
		t.Errorf("gzip entries = %+v", got)
	}
	if r.BytesRead() != n {
		t.Errorf("BytesRead = %d, want the compressed size %d", r.BytesRead(), n)
	}
	if _, err := NewReader(strings.NewReader(""), "x", Options{Format: "xml"}); err == nil {
		t.Error("NewReader accepted format xml")
	}
}

// TestBzip2: a bzip2 log (testdata/two.log.bz2, made with bzip2 -9) is
// read like a gzip one, and one cut short ends early with its damage
// reported, the lines before the cut kept.
func TestBzip2(t *testing.T) {
	data, err := os.ReadFile("testdata/two.log.bz2")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), "a.log.bz2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2 || got[0].Addr != "192.0.2.1" || got[1].Path != "/login" || got[1].Status != 429 {
		t.Errorf("bzip2 entries = %+v", got)
	}
	if r.MalformedCount() != 0 || r.Damage() != nil {
		t.Errorf("malformed %d, damage %v; want none", r.MalformedCount(), r.Damage())
	}
	r, err = NewReader(bytes.NewReader(data[:len(data)-8]), "cut.log.bz2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	if r.Damage() == nil {
		t.Error("a bzip2 log cut short reported no damage")
	}
}

// TestOtherCompressionRefused: a zstd or xz log is refused at once with an
// error naming the compression and how to read it, not read as lines that
// are all malformed.
func TestOtherCompressionRefused(t *testing.T) {
	for name, data := range map[string][]byte{
		"zstd": {0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0x01, 0x00},
		"xz":   {0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00, 0x04},
	} {
		_, err := NewReader(bytes.NewReader(data), "a.log."+name, Options{})
		if err == nil || !strings.Contains(err.Error(), name+"-compressed") || !strings.Contains(err.Error(), name+" -dc") {
			t.Errorf("%s: NewReader error = %v; want one naming %s and how to decompress", name, err, name)
		}
	}
}

// FuzzParseLine checks that no line panics the parsers.
func FuzzParseLine(f *testing.F) {
	f.Add(`127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326 "-" "ua"`)
	f.Add(`{"ts": 1, "ip": "1.2.3.4", "path": "/", "a": {"b": 1}}`)
	f.Add(`203.0.113.7, 10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326 "-" "ua"`)
	// The asterisk and authority forms, which setTarget keeps as they are.
	f.Add(`1 - - [10/Oct/2000:13:55:36 -0700] "OPTIONS * HTTP/1.1" 200 1`)
	f.Add(`1 - - [10/Oct/2000:13:55:36 -0700] "CONNECT example.com:443 HTTP/1.1" 200 1`)
	// A user name with spaces; nginx's "main" format, X-Forwarded-For last.
	f.Add(`192.0.2.1 - john doe [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1`)
	f.Add(`10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "ua" "203.0.113.7, ::1"`)
	f.Add(`example.com:443 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "ua"`)
	// A JSON client field holding an X-Forwarded-For list.
	f.Add(`{"ts": 1e9, "ip": "203.0.113.7, ::1", "x_forwarded_for": "-"}`)
	f.Fuzz(func(t *testing.T, line string) {
		var e Entry
		var tc timeCache
		var hs headerSlab
		if parseCLF(line, &tc, &hs, &e) == nil && (e.Path == "" || e.Path[0] != '/') && !(e.Method == "OPTIONS" && e.Path == "*" || e.Method == "CONNECT" && isAuthority(e.Path)) {
			t.Errorf("parseCLF(%q) accepted path %q", line, e.Path)
		}
		if parseJSON(line, &JSONFields{}, &tc, &e) == nil && e.Addr == "" {
			t.Errorf("parseJSON(%q) accepted an entry without address", line)
		}
	})
}

// TestTruncatedGzip cuts a gzip log short, as a copy taken while the file
// was being compressed is: the lines before the cut are read, the line the
// cut goes through is malformed, and Damage says the rest is missing,
// instead of an error that loses the whole log.
func TestTruncatedGzip(t *testing.T) {
	var plain, buf bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&plain, "192.0.2.%d - - [10/Oct/2000:13:55:36 -0700] \"GET /%d HTTP/1.1\" 200 1\n", i%250, i)
	}
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression) // bytes map to lines
	zw.Write(plain.Bytes())
	zw.Close()
	cut := buf.Bytes()[:buf.Len()/2]
	r, err := NewReader(bytes.NewReader(cut), "a.log.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) < 900 || len(got) > 1100 {
		t.Errorf("read %d entries of the first half of 2000", len(got))
	}
	if r.Damage() == nil || !strings.Contains(r.Damage().Error(), "ends early") {
		t.Errorf("Damage() = %v, want the log's early end", r.Damage())
	}
	if r.MalformedCount() != 1 || !strings.Contains(r.Samples()[0].Reason, "cut off") {
		t.Errorf("malformed %d %v, want the cut line", r.MalformedCount(), r.Samples())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the end = %v, want io.EOF", err)
	}
	// A whole log is not damaged.
	r, _ = NewReader(bytes.NewReader(buf.Bytes()), "a.log.gz", Options{})
	if n := len(readAll(t, r)); n != 2000 || r.Damage() != nil {
		t.Errorf("whole log: %d entries, damage %v", n, r.Damage())
	}
}

// TestLongLineSample checks that the sample of a line too long to parse
// shows its start (where the client address and time are), not its end.
func TestLongLineSample(t *testing.T) {
	long := `192.0.2.7 - - [10/Oct/2000:13:55:36 -0700] "GET /` + strings.Repeat("a", 100<<10) + ` HTTP/1.1" 200 1`
	r, err := NewReader(strings.NewReader(long+"\n"), "l.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	if s := r.Samples(); len(s) != 1 || !strings.HasPrefix(s[0].Text, "192.0.2.7 - - [10/Oct") {
		t.Errorf("samples = %v, want the start of the long line", s)
	}
}

// TestByteOrderMark reads a log saved with a UTF-8 byte order mark: the
// first line's client address does not carry it.
func TestByteOrderMark(t *testing.T) {
	r, err := NewReader(strings.NewReader("\ufeff192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n"), "b.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 1 || got[0].Addr != "192.0.2.1" {
		t.Errorf("entries = %+v", got)
	}
}

// TestJSONTimes reads the timestamps JSON loggers write: RFC 3339, a space
// for the T, no zone (UTC), a zone without colon, a comma before the
// fraction, and Unix times whose nanoseconds a float64 would round.
func TestJSONTimes(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		field string
		want  time.Time
	}{
		{`"2024-03-10T12:00:00.5+01:00"`, utc("2024-03-10T11:00:00.5Z")},
		{`"2024-03-10 12:00:00Z"`, utc("2024-03-10T12:00:00Z")},
		{`"2024-03-10T12:00:00"`, utc("2024-03-10T12:00:00Z")},
		{`"2024-03-10 12:00:00.250"`, utc("2024-03-10T12:00:00.25Z")},
		{`"2024-03-10 12:00:00,250"`, utc("2024-03-10T12:00:00.25Z")},
		{`"2024-03-10T12:00:00+0100"`, utc("2024-03-10T11:00:00Z")},
		{`1710072002123456789`, utc("2024-03-10T12:00:02.123456789Z")},
		{`"1710072002123456789"`, utc("2024-03-10T12:00:02.123456789Z")},
		{`1710072002123456`, utc("2024-03-10T12:00:02.123456Z")},
		{`1710072002.25`, utc("2024-03-10T12:00:02.25Z")},
		// Decimal fractions are read exactly too: a float64 made
		// 1710072002.123 into 02.122999906.
		{`1710072002.123`, utc("2024-03-10T12:00:02.123Z")},
		{`"1710072002.123"`, utc("2024-03-10T12:00:02.123Z")},
		{`1710072002.000000001`, utc("2024-03-10T12:00:02.000000001Z")},
		{`1710072002123.456`, utc("2024-03-10T12:00:02.123456Z")},
		{`1710072002123456.789`, utc("2024-03-10T12:00:02.123456789Z")},
		{`1710072002.1234567899`, utc("2024-03-10T12:00:02.123456789Z")},
		{`1.710072002123e9`, utc("2024-03-10T12:00:02.123Z")},
		// As text, a sign and a fraction without its leading zero are
		// read exactly too, not through a float64.
		{`"+1710072002.123"`, utc("2024-03-10T12:00:02.123Z")},
		{`"+1.710072002123e9"`, utc("2024-03-10T12:00:02.123Z")},
		{`".1710072002123e10"`, utc("2024-03-10T12:00:02.123Z")},
		{`"+.1710072002123456789e10"`, utc("2024-03-10T12:00:02.123456789Z")},
	} {
		line := `{"time": ` + tc.field + `, "ip": "192.0.2.1"}`
		r, err := NewReader(strings.NewReader(line+"\n"), "t.jsonl", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != 1 || !got[0].Time.Equal(tc.want) {
			t.Errorf("time %s: entries %v (malformed %v), want %v", tc.field, got, r.Samples(), tc.want)
		}
	}
}

// TestTimeOutOfRange gives lines whose times Unix nanoseconds cannot hold
// (the replay counts windows in them): they are malformed, not replayed at
// an overflowed instant.
func TestTimeOutOfRange(t *testing.T) {
	log := `192.0.2.1 - - [01/Jan/0002:00:00:00 +0000] "GET / HTTP/1.1" 200 1
192.0.2.1 - - [01/Jan/0001:00:00:00 +0000] "GET / HTTP/1.1" 200 1
192.0.2.1 - - [01/Jan/2300:00:00:00 +0000] "GET / HTTP/1.1" 200 1
{"time": "1600-05-01T00:00:00Z", "ip": "192.0.2.1"}
192.0.2.1 - - [01/Jan/1970:00:00:00 +0000] "GET / HTTP/1.1" 200 1
`
	r, err := NewReader(strings.NewReader(log), "r.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 1 || got[0].Time.Unix() != 0 {
		t.Errorf("entries = %v, want the one in 1970", got)
	}
	if r.MalformedCount() != 4 || !strings.Contains(r.Samples()[0].Reason, "out of range") {
		t.Errorf("malformed %d: %v", r.MalformedCount(), r.Samples())
	}
}
