package logparse

import (
	"strings"
	"testing"
)

// TestJSONNotAnObject: a line that is JSON but no object (a Common Log
// Format line read with --format json starts with a number; an array) is
// reported as such, in the user's terms. The reason was the decoder's
// "cannot unmarshal number into Go value of type map[string]interface {}",
// a Go type the user never wrote.
func TestJSONNotAnObject(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1`, "not a JSON object (a number)"},
		{`["2024-03-10T12:00:00Z", "192.0.2.1"]`, "not a JSON object (an array)"},
		{`"text"`, "not a JSON object (a string)"},
	} {
		r, err := NewReader(strings.NewReader(tc.line+"\n"), "a.log", Options{Format: JSON})
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, r)
		if s := r.Samples(); len(s) != 1 || !strings.Contains(s[0].Reason, tc.want) || strings.Contains(s[0].Reason, "Go value") {
			t.Errorf("%s: samples %v; want one, %q", tc.line, s, tc.want)
		}
	}
}
