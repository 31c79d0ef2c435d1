package logparse

import (
	"strings"
	"testing"
)

// TestJSONStatus: a JSON line's response status is read, as the Common
// Log Format's is, so that count: failed or succeeded can tell what a
// policy counts; a status that is no number leaves it unknown (0).
func TestJSONStatus(t *testing.T) {
	log := `{"time": "2023-11-14T22:13:20Z", "ip": "192.0.2.9", "status": 401}
{"time": "2023-11-14T22:13:21Z", "ip": "192.0.2.9", "status": "200"}
{"time": "2023-11-14T22:13:22Z", "ip": "192.0.2.9", "status_code": 503}
{"time": "2023-11-14T22:13:23Z", "ip": "192.0.2.9", "response": {"code": 404}}
{"time": "2023-11-14T22:13:24Z", "ip": "192.0.2.9", "status": "-"}
{"time": "2023-11-14T22:13:25Z", "ip": "192.0.2.9", "status": 42}
{"time": "2023-11-14T22:13:26Z", "ip": "192.0.2.9"}
{"time": "2023-11-14T22:13:27Z", "ip": "192.0.2.9", "status": "ok", "status_code": 429}
`
	for _, tc := range []struct {
		field string
		want  []int
	}{
		// A default field that holds no code ("status": "ok", an
		// application's own word) leaves the next one its say.
		{"", []int{401, 200, 503, 0, 0, 0, 0, 429}},
		{"response.code", []int{0, 0, 0, 404, 0, 0, 0, 0}},
	} {
		r, err := NewReader(strings.NewReader(log), "j.log", Options{JSON: JSONFields{Status: tc.field}})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != len(tc.want) {
			t.Fatalf("field %q: %d entries, want %d (malformed %v)", tc.field, len(got), len(tc.want), r.Samples())
		}
		for i, e := range got {
			if e.Status != tc.want[i] {
				t.Errorf("field %q: line %d: status %d, want %d", tc.field, i+1, e.Status, tc.want[i])
			}
		}
	}
}
