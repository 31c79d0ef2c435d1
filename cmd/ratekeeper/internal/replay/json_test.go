package replay

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestWriteJSONMalformedSamples: the JSON report gives each sampled
// malformed line as an object of its file, line number, reason and text,
// as it is (JSON-escaped), not the text report's two lines, whose
// indentation and Go quoting a program would have to undo.
func TestWriteJSONMalformedSamples(t *testing.T) {
	in := Input{Files: []string{"access.log"}, Lines: 3, Entries: 1, Malformed: 2, Samples: []logparse.Malformed{
		{File: "access.log", Line: 2, Text: `GARBAGE LINE`, Reason: `bad request target "LINE"`},
		{File: "access.log", Line: 3, Text: "203.0.113.66 - - [10/Mar/2024:11:00:09 +0000] \"\\x16\\x03\" 400 0\x1b", Reason: `bad request line "\\x16\\x03"`},
	}}
	var b strings.Builder
	if err := (&Report{}).WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Samples []struct {
			File   string `json:"file"`
			Line   int64  `json:"line"`
			Reason string `json:"reason"`
			Text   string `json:"text"`
		} `json:"malformed_samples"`
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("the report's malformed_samples are not objects: %v\n%s", err, b.String())
	}
	var want []logparse.Malformed
	for _, s := range got.Samples {
		want = append(want, logparse.Malformed{File: s.File, Line: s.Line, Text: s.Text, Reason: s.Reason})
	}
	if !slices.Equal(want, in.Samples) {
		t.Errorf("malformed_samples = %+v, want %+v", want, in.Samples)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("the JSON report writes a control byte raw:\n%s", b.String())
	}
}
