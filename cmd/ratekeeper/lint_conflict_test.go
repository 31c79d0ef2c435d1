package main

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLintMuxConflict: two routes of a file that a ServeMux cannot
// register together, each matching paths the other does not and neither
// more specific ("GET /a/{x}" and "GET /{y}/b" both match /a/b): check
// called the file valid without a word, and replay refused it, exit 2
// ("conflicts with"). An application's ServeMux panics registering both,
// so one of them is no route of it and its policy never applies there;
// chi registers both, and a file with a route only chi reads is a chi
// application's: no advice then. Routes of other methods, and one route
// spelled two ways (advised otherwise), draw none either.
func TestLintMuxConflict(t *testing.T) {
	for _, tc := range []struct{ name, routes, want string }{
		{"conflict", `a: ["GET /a/{x}"], b: ["GET /{y}/b"]`,
			`b (line 3): route "GET /{y}/b" conflicts with a's "GET /a/{x}" in a ServeMux: both match some paths, like "/a/b", neither more specific, and a ServeMux cannot register both (it panics): under ServeMux one of them is no route and its policy never applies there (chi registers both); ratekeeper replay, which routes such a file as a ServeMux does, refuses it`},
		{"conflict in one policy", `a: ["/a/{x}", "/{y}/b"], b: ["/c"]`,
			`a (line 2): route "/{y}/b" conflicts with a's "/a/{x}" in a ServeMux: both match some paths, like "/a/b", neither more specific`},
		{"a chi application", `a: ["GET /a/{x}"], b: ["GET /{y}/b", "/c/{id:[0-9]+}"]`, ""},
		{"other methods", `a: ["GET /items/{id}"], b: ["DELETE /items/{item}"]`, ""},
		{"spelled two ways", `a: ["GET /items/{id}"], b: ["GET /items/{name}"]`, ""},
	} {
		var doc strings.Builder
		doc.WriteString("policies:\n")
		for p := range strings.SplitSeq(tc.routes, "], ") {
			name, routes, _ := strings.Cut(p, ": ")
			doc.WriteString("  - {name: " + name + ", limit: 5, window: 1m, routes: " + strings.TrimSuffix(routes, "]") + "]}\n")
		}
		cfg, err := policy.ParseConfig([]byte(doc.String()), "test.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ""
		for _, a := range lint(cfg) {
			if strings.Contains(a, "ServeMux") {
				got += a
			}
		}
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: advice %q, want %q", tc.name, got, tc.want)
		}
	}
}
