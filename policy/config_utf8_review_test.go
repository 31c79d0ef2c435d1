package policy_test

import (
	"testing"
)

// TestConfigInvalidUTF8Refused: a file that is not UTF-8 (a route or a
// comment written in Latin-1 or Windows-1252, as an older editor saves
// "café") is refused at its first byte that is not UTF-8, by line and
// column. Both parsers replaced such a byte with U+FFFD and went on: the
// route "/caf\xe9" loaded as "/caf\uFFFD", a pattern no router reports,
// and its policy never applied.
func TestConfigInvalidUTF8Refused(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const reason = "is not UTF-8: byte 0xe9 (Latin-1 or Windows-1252 text, perhaps); save the file as UTF-8"
	for _, tc := range []struct {
		name, file, doc string
		want            []string
	}{
		{"a YAML route", "c.yaml", head + "    routes: [\"/caf\xe9\"]\n",
			[]string{"5:19 : " + reason}},
		{"a JSON route", "c.json", "{\"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\",\n \"routes\": [\"/caf\xe9\"]}]}",
			[]string{"2:18 : " + reason}},
		{"a YAML comment, after a character of two bytes", "c.yaml", head + "    # é caf\xe9\n",
			[]string{"5:12 : " + reason}},
		{"after a byte order mark", "c.yaml", "\ufeff" + "# caf\xe9\n" + head,
			[]string{"1:6 : " + reason}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, tc.file, tc.want) })
	}
}
