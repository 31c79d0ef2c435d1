package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLintUnknownMethod: a method that is none of HTTP's (a typo, "PSOT
// /login", or methods: [PSOT]) loads, since a router registers any token,
// but no client sends it and the policy never applies: check says so, and
// names the standard method it most likely meant. A standard method, and
// one far from every standard one (WebDAV's PROPFIND), draw no guess.
func TestLintUnknownMethod(t *testing.T) {
	const std = "GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS or TRACE"
	for _, tc := range []struct{ field, want string }{
		{`routes: ["PSOT /login"]`, `method "PSOT" (route "PSOT /login") is none of HTTP's ` + std + `: it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies; did you mean "POST"?`},
		{`methods: [PSOT]`, `method "PSOT" is none of HTTP's ` + std + `: it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies; did you mean "POST"?`},
		{`methods: [GETT], routes: ["/a"]`, `method "GETT" is none of HTTP's ` + std + `: it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies; did you mean "GET"?`},
		{`routes: ["DELEET /a"]`, `method "DELEET" (route "DELEET /a") is none of HTTP's ` + std + `: it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies; did you mean "DELETE"?`},
		{`routes: ["PROPFIND /dav"]`, `method "PROPFIND" (route "PROPFIND /dav") is none of HTTP's ` + std + `: it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies`},
		{`routes: ["POST /login", "/x"], methods: [POST]`, ""},
		{`methods: [GET, HEAD, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT]`, ""},
	} {
		doc := fmt.Sprintf("policies:\n  - {name: p, limit: 5, window: 1m, algorithm: sliding_window, key: [ip], %s}\n", tc.field)
		cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.field, err)
		}
		var got []string
		for _, a := range lint(cfg) {
			if strings.Contains(a, "method") {
				got = append(got, a)
			}
		}
		var want []string
		if tc.want != "" {
			want = []string{"p (line 2): " + tc.want}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: advice\n %q\nwant\n %q", tc.field, got, want)
		}
	}
}
