package logparse

import (
	"strings"
	"testing"
)

// TestCLFExtraFields: a custom format that appends fields to the Common
// Log Format (Apache's "%h %l %u %t \"%r\" %>s %b %D", nginx's "...
// $body_bytes_sent $request_time $host"), or that logs the Referer alone
// after it, had every line malformed ("referer field is not quoted", "user
// agent field is not quoted") and the replay ended with "no parseable
// line", while the Combined format with fields appended was read. Fields
// after the bytes that are not the quoted Referer and User-Agent are
// ignored, as those after the User-Agent are; a quote that opens a field
// and never closes still makes the line malformed. (clf_mut2_test.go had
// three such lines malformed: "... 200 1 ref \"curl\"", "... 200 1
// \"ref\"" and "... 200 1 \"ref\" curl".)
func TestCLFExtraFields(t *testing.T) {
	const head = `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "GET /a?b=1 HTTP/1.1" 200 10`
	for _, tc := range []struct {
		tail, referer, agent string
	}{
		{" 1234", "", ""},                                             // Apache %D
		{" 0.003 example.com", "", ""},                                // nginx $request_time $host
		{" - 0.003", "", ""},                                          // an empty field first
		{` ref "curl"`, "", ""},                                       // not quoted: no Referer, nor what follows
		{` "https://example.com/"`, "https://example.com/", ""},       // the Referer alone
		{` "https://example.com/" 0.003`, "https://example.com/", ""}, // then a field
		{` "-" "curl/8" 0.003 "upstream"`, "", "curl/8"},              // Combined, fields appended (as before)
	} {
		line := head + tc.tail
		var e Entry
		var tcache timeCache
		var hs headerSlab
		if err := parseCLF(line, &tcache, &hs, &e); err != nil {
			t.Errorf("parseCLF(%q) = %v, want it read", line, err)
			continue
		}
		if e.Addr != "192.0.2.1" || e.User != "ann" || e.Method != "GET" || e.Path != "/a" || e.Query != "b=1" || e.Status != 200 || e.Referer != tc.referer || e.UserAgent != tc.agent {
			t.Errorf("parseCLF(%q) = %+v, want 192.0.2.1 ann GET /a?b=1 200, referer %q, agent %q", line, e, tc.referer, tc.agent)
		}
	}
	for _, tail := range []string{` "https://example.com/`, ` "-" "curl/8`} {
		line := head + tail
		var e Entry
		var tcache timeCache
		var hs headerSlab
		if err := parseCLF(line, &tcache, &hs, &e); err == nil || !strings.Contains(err.Error(), "no closing quote") {
			t.Errorf("parseCLF(%q) = %v, want an error: a field with no closing quote", line, err)
		}
	}
}
