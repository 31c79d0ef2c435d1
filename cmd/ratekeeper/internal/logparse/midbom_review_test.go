package logparse

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestByteOrderMarkWithinLog: logs joined end to end (cat a.log b.log, or
// rotated logs' gzip members one after the other, read as one stream),
// each saved with a UTF-8 byte order mark, have a mark at the start of a
// line within the log. It is no part of that line either: the Common Log
// Format line after it was read with the client "\ufeff192.0.2.2" (no
// address: refused for want of a key), a JSON line was malformed ("no
// client address"), and a W3C directive was not one, so the lines after
// it were read with the previous #Fields.
func TestByteOrderMarkWithinLog(t *testing.T) {
	const bom = "\ufeff"
	plain := "192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] \"GET /a HTTP/1.1\" 200 1\n" +
		bom + "192.0.2.2 - - [10/Mar/2024:12:00:01 +0000] \"GET /b HTTP/1.1\" 200 1\r\n" +
		bom + "{\"time\": \"2024-03-10T12:00:02Z\", \"ip\": \"192.0.2.3\", \"uri\": \"/c\"}\n" +
		bom + "#Fields: date time c-ip cs-method cs-uri-stem sc-status\n" +
		"2024-03-10 12:00:03 192.0.2.4 GET /d 200\n" +
		bom + "#Fields: date time cs-method cs-uri-stem c-ip sc-status\n" +
		"2024-03-10 12:00:04 GET /e 192.0.2.5 200\n"
	want := []struct{ addr, path string }{{"192.0.2.1", "/a"}, {"192.0.2.2", "/b"}, {"192.0.2.3", "/c"}, {"192.0.2.4", "/d"}, {"192.0.2.5", "/e"}}
	// The same lines as gzip members, one a line, as zcat would join
	// rotated logs.
	var gz bytes.Buffer
	for _, line := range strings.SplitAfter(plain, "\n") {
		if line == "" {
			continue
		}
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(line))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{"plain": []byte(plain), "gzip members": gz.Bytes()} {
		r, err := NewReader(bytes.NewReader(data), "joined.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != len(want) || r.MalformedCount() != 0 {
			t.Errorf("%s: %d entries, %d malformed (%v); want %d, none malformed", name, len(got), r.MalformedCount(), r.Samples(), len(want))
			continue
		}
		for i, w := range want {
			if got[i].Addr != w.addr || got[i].Path != w.path {
				t.Errorf("%s: entry %d: client %q, path %q; want %q, %q", name, i, got[i].Addr, got[i].Path, w.addr, w.path)
			}
		}
	}
}
