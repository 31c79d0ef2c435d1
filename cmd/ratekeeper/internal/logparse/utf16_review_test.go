package logparse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 with its byte order mark, little-endian
// (as Windows PowerShell's > and Out-File write text) or big-endian.
func utf16Bytes(s string, bigEndian bool) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	var b []byte
	for _, u := range utf16.Encode([]rune("\ufeff" + s)) {
		b = order.AppendUint16(b, u)
	}
	return b
}

// TestUTF16Log: a log saved as UTF-16 with its byte order mark (IIS logs
// joined in Windows PowerShell 5, "Get-Content u_ex*.log > all.log", which
// writes UTF-16LE) was read byte by byte: every line malformed, a NUL
// byte between each two characters of the samples, and the replay ended
// with "no parseable line". It is decoded, plain or compressed, a line
// ending CRLF as PowerShell writes it, a user name outside the Basic
// Multilingual Plane (a surrogate pair) kept.
func TestUTF16Log(t *testing.T) {
	const log = "#Fields: date time c-ip cs-username cs-method cs-uri-stem sc-status\r\n" +
		"2024-03-10 12:00:00 192.0.2.1 ann GET /a 200\r\n" +
		"2024-03-10 12:00:01 2001:db8::1 \U0001F600 POST /login 401\r\n" +
		`192.0.2.9 - - [10/Mar/2024:12:00:02 +0000] "GET /c HTTP/1.1" 200 1` // no #Fields: a W3C entry, malformed
	for _, tc := range []struct {
		name      string
		bigEndian bool
		gzip      bool
	}{{"utf-16le", false, false}, {"utf-16be", true, false}, {"utf-16le gzip", false, true}} {
		data := utf16Bytes(log, tc.bigEndian)
		if tc.gzip {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(data)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			data = gz.Bytes()
		}
		r, err := NewReader(bytes.NewReader(data), "all.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		var got []string
		for _, e := range es {
			got = append(got, e.Addr+" "+e.User+" "+e.Method+" "+e.Path)
		}
		want := []string{"192.0.2.1 ann GET /a", "2001:db8::1 \U0001F600 POST /login"}
		if strings.Join(got, ", ") != strings.Join(want, ", ") || r.MalformedCount() != 1 || r.Lines() != 4 {
			t.Errorf("%s: entries %q, %d malformed of %d lines %v; want %q, 1 malformed of 4", tc.name, got, r.MalformedCount(), r.Lines(), r.Samples(), want)
		}
	}
}

// TestUTF16Edges: unpaired surrogates become U+FFFD, the unit after a
// lone high surrogate kept; an odd byte at the end becomes U+FFFD; a text
// longer than a decoding chunk comes whole.
func TestUTF16Edges(t *testing.T) {
	long := strings.Repeat("\u00e9a\U0001F600", utf16Chunk)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"lone high", []byte{0xff, 0xfe, 0x3d, 0xd8, 'x', 0, '\n', 0}, "\ufffdx\n"},
		{"lone low", []byte{0xff, 0xfe, 0x00, 0xde, 'x', 0}, "\ufffdx"},
		{"high at end", []byte{0xfe, 0xff, 0xd8, 0x3d}, "\ufffd"},
		{"odd byte", []byte{0xff, 0xfe, 'x', 0, 'y'}, "x\ufffd"},
		{"long", utf16Bytes(long, false), long},
	} {
		var b bytes.Buffer
		if _, err := b.ReadFrom(decodeUTF16(bufio.NewReader(bytes.NewReader(tc.in)))); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			got := b.String()
			if len(got) > 40 {
				got = got[:40] + "..."
			}
			t.Errorf("%s: decoded %q (%d bytes), want %d bytes", tc.name, got, b.Len(), len(tc.want))
		}
	}
}
