package logparse

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestGzipTrailingData: bytes after the last gzip member are not a log cut
// short. Zero padding (a file copied with its preallocated blocks, a tape
// block) is ignored, as gzip -d ignores it; other bytes (text appended to
// a .gz by mistake) are reported, as ignored, never as "the rest of the
// log is missing", which all of the log was read. A member that begins and
// is cut short is still a truncated log.
func TestGzipTrailingData(t *testing.T) {
	member := func(from, n int) []byte {
		var plain, buf bytes.Buffer
		for i := range n {
			fmt.Fprintf(&plain, "192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /%d HTTP/1.1\" 200 1\n", from+i)
		}
		zw := gzip.NewWriter(&buf)
		zw.Write(plain.Bytes())
		zw.Close()
		return buf.Bytes()
	}
	one, two := member(0, 100), member(100, 50)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name    string
		data    []byte
		entries int
		damage  string // in Damage's text; "" for none
	}{
		{"whole", one, 100, ""},
		{"two members", cat(one, two), 150, ""},
		{"zero padding", cat(one, make([]byte, 1024)), 100, ""},
		{"two members, zero padding", cat(one, two, make([]byte, 7)), 150, ""},
		{"text after", cat(one, []byte("garbage\n")), 100, "8 bytes after the compressed data"},
		{"one byte after", cat(one, []byte{'x'}), 100, "1 byte after the compressed data"},
		{"zeros then text", cat(one, make([]byte, 10), []byte("x")), 100, "11 bytes after the compressed data"},
		{"second member cut in its header", cat(one, two[:5]), 100, "ends early"},
		{"second member cut", cat(one, two[:len(two)/2]), 100, "ends early"},
		{"empty member, text after", cat(member(0, 0), []byte("garbage\n")), 0, "8 bytes after the compressed data"},
		{"empty member, second member cut", cat(member(0, 0), two[:len(two)/2]), 0, "ends early"},
	} {
		r, err := NewReader(bytes.NewReader(tc.data), "a.log.gz", Options{})
		if err != nil {
			t.Errorf("%s: NewReader: %v", tc.name, err)
			continue
		}
		got := len(readAll(t, r))
		if tc.damage == "" && (got != tc.entries || r.Damage() != nil) {
			t.Errorf("%s: %d entries, damage %v; want %d and none", tc.name, got, r.Damage(), tc.entries)
		}
		if tc.damage != "" && (got < tc.entries || r.Damage() == nil || !strings.Contains(r.Damage().Error(), tc.damage)) {
			t.Errorf("%s: %d entries, damage %v; want at least %d and %q", tc.name, got, r.Damage(), tc.entries, tc.damage)
		}
		if tc.damage != "ends early" && r.Damage() != nil && strings.Contains(r.Damage().Error(), "missing") {
			t.Errorf("%s: damage %v says the log is missing a part it has", tc.name, r.Damage())
		}
	}
}

// FuzzReader reads arbitrary bytes as a log, plain or compressed: no
// panic, no error but io.EOF (the bytes come from memory), every line
// counted as an entry, a malformed line or a blank one, and Next at io.EOF
// for good once it has returned it.
func FuzzReader(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n{\"ts\": 1e9, \"ip\": \"::1\"}\n"))
	zw.Close()
	f.Add(gz.Bytes())
	f.Add(append(bytes.Clone(gz.Bytes()), gz.Bytes()...))
	f.Add(append(bytes.Clone(gz.Bytes()), 0, 0, 'x'))
	f.Add([]byte("\xef\xbb\xbf192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\r\n\n"))
	f.Add([]byte("BZh9"))
	f.Add([]byte("#Software: Microsoft Internet Information Services 10.0\r\n#Version: 1.0\r\n#Date: 2024-03-10 12:00:00\r\n#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken X-Forwarded-For\r\n2024-03-10 12:00:00 10.0.0.1 GET /a x=1 443 - 192.0.2.1 Mozilla/5.0+(X11) - 200 0 0 15 203.0.113.7,+10.0.0.1\r\n"))
	f.Add([]byte("#Version: 1.0\n#Date: 12-Jan-1996 00:00:00\n#Fields: time c-ip cs-method cs-uri cs(X-Key)\n00:34:23 192.0.2.1 GET /foo \"k \"\"1\"\"\"\n#Fields: date\ttime\n2024-03-10\t12:00:00\tx\n"))
	f.Add([]byte("203.0.113.7, 10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n"))
	f.Add([]byte(`{"log":"192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTT","stream":"stdout","time":"2026-12-03T20:40:26Z"}` + "\n" + `{"log":"P/1.1\" 200 1\n","stream":"stdout","time":"2026-12-03T20:40:26Z","attrs":{"tag":"web"}}` + "\n"))
	f.Add([]byte("2026-12-03T20:40:26.5Z stdout P 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /\n2026-12-03T20:40:26Z stderr F x\n2026-12-03T20:40:27Z stdout F  HTTP/1.1\" 200 1\n2026-12-03T20:40:27Z stderr P y\n"))
	f.Add([]byte("<190>Mar  9 12:00:00 web1 nginx[2345]: 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n2024-03-10T12:00:00+0100 nginx: {\"ts\": 1e9, \"ip\": \"::1\"}\n<14>1 - h a - - [x k=\"\\]\"] 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n"))
	f.Add([]byte("\x00\x00\x00192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n\x00\x00\n\x00"))
	// journalctl's short-precise, short-full and short-unix; docker compose logs, with -t.
	f.Add([]byte("Mar 10 12:00:00.123456 web1 nginx[2345]: 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\nSun 2024-03-10 13:00:00 CET web1 nginx: {\"ts\": 1e9, \"ip\": \"::1\"}\n1710072000.123456 nginx: x\n"))
	f.Add([]byte("nginx-1  | 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\nnginx-1  |\nweb_1 | 2026-12-03T20:40:26.5Z {\"ts\": 1e9, \"ip\": \"::1\"}\n"))
	// UTF-16LE with its byte order mark: a line, a lone surrogate, an odd byte.
	f.Add([]byte("\xff\xfe1\x00 \x00-\x00\n\x00\x3d\xd8x\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "f.log", Options{})
		if err != nil {
			return // zstd or xz, or a gzip header refused
		}
		var n int64
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			n++
		}
		if n+r.MalformedCount() > r.Lines() {
			t.Errorf("%d entries and %d malformed in %d lines", n, r.MalformedCount(), r.Lines())
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("Next after io.EOF = %v", err)
		}
	})
}
