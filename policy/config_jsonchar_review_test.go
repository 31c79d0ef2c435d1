package policy_test

import "testing"

// TestJSONInvalidCharacterNamed: a character of the file that JSON does
// not allow where it stands is named as the file holds it. encoding/json
// names the first byte of its UTF-8 encoding as if it were Latin-1: a
// typographic quote (a word processor's, or macOS's smart quotes) was
// "invalid character 'â'", and a non-breaking space pasted from a web page
// "invalid character 'Â'", characters the file does not hold.
func TestJSONInvalidCharacterNamed(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"a typographic quote", "{\"policies\": [{\"name\": \u201ca\u201d, \"limit\": 1, \"window\": \"1s\"}]}",
			[]string{`1:24 : invalid JSON: invalid character '“' (U+201C, a typographic quote: write ") looking for beginning of value`}},
		{"a non-breaking space", "{\n\u00a0\"policies\": []}",
			[]string{`2:1 : invalid JSON: invalid character '\u00a0' (U+00A0, a space JSON does not read as one: write a space)`}},
		{"a letter", "{\"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\"}, é]}",
			[]string{`1:58 : invalid JSON: invalid character 'é' (U+00E9) looking for beginning of value`}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "c.json", tc.want) })
	}
}
