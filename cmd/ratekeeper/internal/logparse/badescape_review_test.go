package logparse

import (
	"strings"
	"testing"
)

// TestRequestLineWithInvalidEscape: a request line whose path holds a '%'
// not followed by two hex digits ("/%%32%65%%32%65/etc/passwd", a
// scanner's) was refused by the server before any handler: net/http
// answers 400 when it parses the target (so do nginx and Apache, which
// logged it). It is no request the middleware would have decided: the
// line is malformed, its reason saying so, not a request counted against
// its client. A query's escapes are not checked there (net/http leaves
// RawQuery as sent), and valid escapes are kept.
func TestRequestLineWithInvalidEscape(t *testing.T) {
	bad := []string{"/%zz", "/a%2", "/%%32%65%%32%65/etc/passwd", "/caf%C3%A", "http://example.com/%g0"}
	good := []string{"/a%2Fb", "/caf%C3%A9", "/search?q=%zz", "/100%25", "*"}
	var log strings.Builder
	for _, p := range append(bad, good...) {
		method := "GET"
		if p == "*" {
			method = "OPTIONS"
		}
		log.WriteString("192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] \"" + method + " " + p + " HTTP/1.1\" 400 0\n")
		log.WriteString(`{"time": "2024-03-10T12:00:00Z", "ip": "192.0.2.1", "request": "` + method + " " + p + ` HTTP/1.1", "status": 400}` + "\n")
	}
	r, err := NewReader(strings.NewReader(log.String()), "scan.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2*len(good) || r.MalformedCount() != int64(2*len(bad)) {
		t.Fatalf("%d entries, %d malformed; want %d (the valid targets, each as a CLF and a JSON line) and %d", len(got), r.MalformedCount(), 2*len(good), 2*len(bad))
	}
	for i, e := range got {
		if want, _, _ := strings.Cut(strings.TrimPrefix(good[i/2], "http://example.com"), "?"); e.Path != want {
			t.Errorf("entry %d: path %q, want %q", i, e.Path, want)
		}
	}
	for _, m := range r.Samples() {
		if !strings.Contains(m.Reason, "escape") || !strings.Contains(m.Reason, "400") {
			t.Errorf("line %d: reason %q does not say the escape is invalid and the server answered 400", m.Line, m.Reason)
		}
	}
}
