package logparse

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// TestTimeRangeEdges: the last second of 2261 is read, the first instant
// of 2262 is malformed (the range the reason states, 1970 to 2261).
func TestTimeRangeEdges(t *testing.T) {
	log := `192.0.2.1 - - [31/Dec/2261:23:59:59 +0000] "GET /last HTTP/1.1" 200 1
192.0.2.1 - - [01/Jan/2262:00:00:00 +0000] "GET /over HTTP/1.1" 200 1
192.0.2.1 - - [01/Jan/2262:00:59:59 +0100] "GET /last-elsewhere HTTP/1.1" 200 1
`
	r, err := NewReader(strings.NewReader(log), "r.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2 || got[0].Path != "/last" || got[1].Path != "/last-elsewhere" {
		t.Errorf("entries = %+v, want /last and /last-elsewhere", got)
	}
	if s := r.Samples(); len(s) != 1 || s[0].Line != 2 || s[0].Reason != "time 2262-01-01T00:00:00Z out of range (1970 to 2261)" {
		t.Errorf("malformed = %v, want line 2 out of range", s)
	}
}

// failingReader returns data and then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadErrorsAreNotDamage: a log that cannot be read (the file's read
// fails) is an error, not a compressed log that ends early: in a gzip
// header, NewReader returns it; in a plain log, Next does, even when it is
// io.ErrUnexpectedEOF, which in a compressed log would be damage.
func TestReadErrorsAreNotDamage(t *testing.T) {
	disk := errors.New("input/output error")
	if r, err := NewReader(&failingReader{data: []byte{0x1f, 0x8b}, err: disk}, "a.log.gz", Options{}); !errors.Is(err, disk) ||
		err.Error() != "logparse: a.log.gz: gzip header: input/output error" {
		t.Errorf("gzip header unreadable: reader %v, error %v; want the read error", r, err)
	}
	line := `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 1` + "\n"
	r, err := NewReader(&failingReader{data: []byte(line), err: io.ErrUnexpectedEOF}, "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := r.Next(); err != nil || e.Path != "/" {
		t.Fatalf("first line: %+v, %v", e, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != "logparse: a.log: unexpected EOF" {
		t.Errorf("after the line: %v, want the read error", err)
	}
	if r.Damage() != nil {
		t.Errorf("Damage() = %v, want nil: a plain log is not damaged", r.Damage())
	}
}

// gz returns s as one gzip member.
func gz(s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.Bytes()
}

// cutStored returns s as a gzip member of stored (uncompressed) blocks,
// cut after its first n bytes.
func cutStored(s string, n int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	zw.Write([]byte(s))
	zw.Close()
	return buf.Bytes()[:10+5+n] // the gzip header, the block's header
}

// TestGzipMemberEdges: a member of one byte (which gzip reads with the
// member's end) is not lost; the byte 0x1f after the last member is the
// start of a member cut short, 0x1f and another byte are trailing data;
// whatever the end, no line is made of bytes that are not the log's.
func TestGzipMemberEdges(t *testing.T) {
	const line1 = `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /1 HTTP/1.1" 200 1`
	const line2 = `192.0.2.2 - - [10/Oct/2000:13:55:37 -0700] "GET /2 HTTP/1.1" 200 1`
	whole := gz(line1 + "\n")
	for _, tc := range []struct {
		name    string
		data    []byte
		paths   string
		lines   int64
		damage  string // in Damage's text; "" for none
		sample  int64  // the line of the one malformed sample; 0: none
		samples string // in its reason
	}{
		{"a member of one byte", bytes.Join([][]byte{gz(line1), gz("\n"), gz(line2 + "\n")}, nil), "/1 /2", 2, "", 0, ""},
		{"0x1f after", append(gz(line1+"\n"), 0x1f), "/1", 1, "ends early", 0, ""},
		{"0x1f and a byte after", append(gz(line1+"\n"), 0x1f, 'x'), "/1", 1, "2 bytes after the compressed data", 0, ""},
		{"text after", append(gz(line1+"\n"), "garbage\n"...), "/1", 1, "8 bytes after the compressed data", 0, ""},
		{"second member cut in its header", append(gz(line1+"\n"), gz(line2 + "\n")[:5]...), "/1", 1, "ends early", 0, ""},
		{"cut one byte into line 2", cutStored(line1+"\n"+line2+"\n", len(line1)+2), "/1", 2, "ends early", 2, "line cut off where the compressed data ends"},
		{"cut within line 2", bytes.Join([][]byte{whole, gz(line2[:20])[:30]}, nil), "/1", 2, "ends early", 2, "line cut off where the compressed data ends"},
	} {
		r, err := NewReader(bytes.NewReader(tc.data), "a.log.gz", Options{})
		if err != nil {
			t.Errorf("%s: NewReader: %v", tc.name, err)
			continue
		}
		var paths []string
		for _, e := range readAll(t, r) {
			paths = append(paths, e.Path)
		}
		if got := strings.Join(paths, " "); got != tc.paths || r.Lines() != tc.lines {
			t.Errorf("%s: paths %q in %d lines, want %q in %d (malformed %v)", tc.name, got, r.Lines(), tc.paths, tc.lines, r.Samples())
		}
		switch d := r.Damage(); {
		case tc.damage == "" && d != nil, tc.damage != "" && (d == nil || !strings.Contains(d.Error(), tc.damage)):
			t.Errorf("%s: damage %v, want %q", tc.name, d, tc.damage)
		}
		s := r.Samples()
		switch {
		case tc.sample == 0 && (len(s) != 0 || r.MalformedCount() != 0):
			t.Errorf("%s: malformed %d %v, want none", tc.name, r.MalformedCount(), s)
		case tc.sample != 0 && (len(s) != 1 || s[0].Line != tc.sample || s[0].Reason != tc.samples):
			t.Errorf("%s: malformed %v, want line %d: %s", tc.name, s, tc.sample, tc.samples)
		}
	}
}

// TestCompressedDamageKinds: every way compressed data can be corrupt (a
// checksum that does not match, deflate data that does not decode, a
// second member's bad header, a bzip2 block that does not decode) ends the
// log with its damage reported, the lines before kept; none is an error of
// Next, which a replay would take for a file it could not read.
func TestCompressedDamageKinds(t *testing.T) {
	const line = `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /1 HTTP/1.1" 200 1` + "\n"
	good := gz(line)
	badSum := bytes.Clone(good)
	badSum[len(badSum)-8] ^= 0xff // CRC-32
	badFlate := append(gz(line), 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff)
	badHeader := append(gz(line), 0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0xff)
	bz, err := os.ReadFile("testdata/two.log.bz2")
	if err != nil {
		t.Fatal(err)
	}
	badBz := bytes.Clone(bz)
	for i := 10; i < 30; i++ {
		badBz[i] ^= 0x55
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		entries int
		says    string // a checksum that fails: the data is damaged (TestGzipChecksumDamage)
	}{
		{"checksum", badSum, 0, "is damaged"},
		{"deflate data", badFlate, 1, "ends early"},
		{"second member's header", badHeader, 1, "ends early"},
		{"bzip2 block", badBz, 0, "is damaged"},
	} {
		r, err := NewReader(bytes.NewReader(tc.data), "a.log.gz", Options{})
		if err != nil {
			t.Errorf("%s: NewReader: %v", tc.name, err)
			continue
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: Next: %v, want the damage reported at io.EOF", tc.name, err)
				break
			}
			n++
		}
		if d := r.Damage(); n < tc.entries || d == nil || !strings.Contains(d.Error(), tc.says) {
			t.Errorf("%s: %d entries, damage %v; want at least %d and %q", tc.name, n, d, tc.entries, tc.says)
		}
	}
}

// TestDamagedAtStartReadsNothing: a gzip log cut in its header yields no
// line at all, not its header's bytes read as text.
func TestDamagedAtStartReadsNothing(t *testing.T) {
	r, err := NewReader(bytes.NewReader(gz("x\n")[:6]), "a.log.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF || r.Lines() != 0 || r.MalformedCount() != 0 || r.Damage() == nil {
		t.Errorf("Next = %v after %d lines, %d malformed, damage %v; want io.EOF, none, none, the early end", err, r.Lines(), r.MalformedCount(), r.Damage())
	}
}

// TestLongLineSampleLength: the sample of a line too long to parse is its
// first 120 bytes exactly.
func TestLongLineSampleLength(t *testing.T) {
	long := `192.0.2.7 - - [10/Oct/2000:13:55:36 -0700] "GET /` + strings.Repeat("a", 100<<10) + ` HTTP/1.1" 200 1`
	r, err := NewReader(strings.NewReader(long+"\n"+long), "l.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	if s := r.Samples(); len(s) != 2 || s[0].Text != long[:120] || s[1].Text != long[:120] || s[1].Line != 2 {
		t.Errorf("samples = %v, want the first 120 bytes of lines 1 and 2", s)
	}
}

// TestNotBzip2: a plain log whose first bytes are nearly bzip2's magic
// ("BZh" and a block size digit 1 to 9) is read as text: its first line is
// malformed, the next one read, and nothing is reported damaged. A log
// made with bzip2 -1 (testdata/fast.log.bz2), the lowest block size, is
// bzip2.
func TestNotBzip2(t *testing.T) {
	const line = `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /1 HTTP/1.1" 200 1`
	for _, start := range []string{"BZh0", "BZh:", "BZx9", "BQh9", "AZh9", "BZh"} {
		r, err := NewReader(strings.NewReader(start+"\n"+line+"\n"), "a.log", Options{})
		if err != nil {
			t.Errorf("%q: NewReader: %v", start, err)
			continue
		}
		got := readAll(t, r)
		if len(got) != 1 || got[0].Path != "/1" || r.MalformedCount() != 1 || r.Damage() != nil {
			t.Errorf("%q: entries %+v, malformed %d, damage %v; want /1, 1, none", start, got, r.MalformedCount(), r.Damage())
		}
	}
	// A log of three bytes, "BZh": one malformed line.
	r, err := NewReader(strings.NewReader("BZh"), "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 0 || r.Lines() != 1 || r.MalformedCount() != 1 {
		t.Errorf(`"BZh": entries %+v, %d lines, %d malformed; want none, 1, 1`, got, r.Lines(), r.MalformedCount())
	}
	// Block size 1 (bzip2 -1) is bzip2.
	data, err := os.ReadFile("testdata/fast.log.bz2")
	if err != nil {
		t.Fatal(err)
	}
	r, err = NewReader(bytes.NewReader(data), "fast.log.bz2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 2 || got[1].Path != "/2" || r.Damage() != nil {
		t.Errorf("bzip2 -1: entries %+v, damage %v", got, r.Damage())
	}
}

// TestReaderCounts: NoPath and NoMethod count the JSON entries read with
// the default target (/) and method (GET); a W3C log's lines starting with
// '#' are directives or skipped, never malformed; a malformed line's
// sample is its first 120 bytes.
func TestReaderCounts(t *testing.T) {
	log := `{"time": "2023-11-14T22:13:20Z", "ip": "192.0.2.9"}
{"time": "2023-11-14T22:13:21Z", "ip": "192.0.2.9", "method": "POST"}
{"time": "2023-11-14T22:13:22Z", "ip": "192.0.2.9", "path": "/x"}
{"time": "2023-11-14T22:13:23Z", "ip": "192.0.2.9", "method": "PUT", "path": "/y"}
`
	r, err := NewReader(strings.NewReader(log), "j.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 4 || r.NoPath() != 2 || r.NoMethod() != 2 {
		t.Errorf("%d entries, %d without path, %d without method; want 4, 2, 2", len(got), r.NoPath(), r.NoMethod())
	}

	w3c := "#Fields: date time c-ip cs-method cs-uri-stem sc-status\n#not a directive\n2024-03-10 12:00:00 192.0.2.1 GET /a 200\n"
	r, err = NewReader(strings.NewReader(w3c), "w.log", Options{Format: W3C})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 1 || got[0].Path != "/a" || r.MalformedCount() != 0 {
		t.Errorf("W3C: entries %+v, malformed %v; want /a and none", got, r.Samples())
	}

	for _, n := range []int{120, 121, 122} {
		bad := "x" + strings.Repeat("y", n-1)
		r, err = NewReader(strings.NewReader(bad+"\n"), "m.log", Options{Format: CLF})
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, r)
		if s := r.Samples(); len(s) != 1 || s[0].Text != bad[:120] {
			t.Errorf("%d bytes: samples %v, want the first 120 bytes", n, s)
		}
	}
}
