package policy_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigUTF16Refused: a file saved as UTF-16 (Notepad's "Unicode",
// PowerShell's default redirection) is refused as such. Its bytes were
// read as UTF-8, and the error made no sense of it: "must be a mapping,
// not a string" for YAML, "invalid character 'ÿ' looking for beginning of
// value" for JSON.
func TestConfigUTF16Refused(t *testing.T) {
	const doc = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	enc := func(bom []byte, order binary.AppendByteOrder, s string) []byte {
		out := append([]byte(nil), bom...)
		for _, c := range utf16.Encode([]rune(s)) {
			out = order.AppendUint16(out, c)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"le-bom.yaml", enc([]byte{0xff, 0xfe}, binary.LittleEndian, doc)},
		{"be-bom.yaml", enc([]byte{0xfe, 0xff}, binary.BigEndian, doc)},
		{"le.yaml", enc(nil, binary.LittleEndian, doc)},
		{"be.yaml", enc(nil, binary.BigEndian, doc)},
		{"le-bom.json", enc([]byte{0xff, 0xfe}, binary.LittleEndian, `{"policies": []}`)},
		{"le.json", enc(nil, binary.LittleEndian, `{"policies": []}`)},
	} {
		_, err := policy.ParseConfig(tc.data, tc.name)
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != 1 || ces[0].Column != 1 || !strings.Contains(ces[0].Reason, "UTF-16") {
			t.Errorf("%s: %v; want one error, at 1:1, that the file is UTF-16", tc.name, err)
		}
	}
	// UTF-8, with or without its byte order mark, loads.
	for _, data := range []string{doc, "\ufeff" + doc} {
		if _, err := policy.ParseConfig([]byte(data), "u.yaml"); err != nil {
			t.Errorf("%q: %v", data, err)
		}
	}
}
