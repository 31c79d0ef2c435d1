package reqcopy

import (
	"strings"
	"testing"
)

// TestWildcards: the path value names of a pattern, as http.ServeMux
// and chi write them, that Back gives the caller's request.
func TestWildcards(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"", ""},
		{"/items", ""},
		{"POST /items/{id}", "id"},
		{"GET example.com/{a}/b/{rest...}", "a rest"},
		{"/{$}", ""},
		{"/{id:[0-9]+}/files/*", "id *"},
		{"/{id:[0-9]{3}}", "id"},
		{"/{broken", ""},
	} {
		var got []string
		wildcards(tc.pattern, func(name string) { got = append(got, name) })
		if strings.Join(got, " ") != tc.want {
			t.Errorf("wildcards(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
