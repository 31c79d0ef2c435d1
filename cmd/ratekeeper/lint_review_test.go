package main

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// lintMatching returns the advice on the configuration doc that holds
// every one of words.
func lintMatching(t *testing.T, doc string, words ...string) []string {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range lint(cfg) {
		all := true
		for _, w := range words {
			all = all && strings.Contains(a, w)
		}
		if all {
			out = append(out, a)
		}
	}
	return out
}

// TestLintIPv6PrefixPastSubscriber: ipv6_prefix above 64 keys apart the
// addresses of one subscriber, who is handed a /64 at least: one client
// sends from 2^64 addresses, each with an allowance of its own (and a key
// of its own in the store), so an ip key limits nobody. check gave no
// advice. 64 and below, or an ipv6_prefix no ip key reads, draw none.
func TestLintIPv6PrefixPastSubscriber(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{"ipv6_prefix: 128\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", true},
		{"ipv6_prefix: 96\npolicies:\n  - {name: a, limit: 10, window: 1m, key: user, fallback: [ip]}\n", true},
		{"ipv6_prefix: 65\npolicies:\n  - {name: a, limit: 10, window: 1m, key: [ip, route]}\n", true},
		{"ipv6_prefix: 64\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", false},
		{"ipv6_prefix: 56\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", false},
		{"policies:\n  - {name: a, limit: 10, window: 1m}\n", false},
		{"ipv6_prefix: 128\npolicies:\n  - {name: a, limit: 10, window: 1m, key: user}\n", false},
	} {
		got := lintMatching(t, tc.doc, "ipv6_prefix")
		if tc.want && (len(got) != 1 || !strings.Contains(got[0], "/64")) {
			t.Errorf("%s: advice %q, want one on ipv6_prefix naming the subscriber's /64", tc.doc, got)
		}
		if !tc.want && len(got) != 0 {
			t.Errorf("%s: advice %q, want none on ipv6_prefix", tc.doc, got)
		}
	}
}

// TestLintKeyTheClientChooses: a key holding a value the client sends as
// it likes (a header or a cookie, alone or with other parts, or a
// fallback reached without an ip, such as after user) gives a client that sends a new value on each request a new
// allowance each time, and a new key in the store, unless the application
// checks the value before the limiter: check said nothing, even of
// header:X-Real-IP read from any client. A policy keyed by ip over the
// same requests (all of them, or the same routes and methods) bounds each
// client whatever it sends; with one there is no advice, nor on keys of
// ip or user (which the application sets, keyfunc.WithUser).
func TestLintKeyTheClientChooses(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // words of the advice; nil: none
	}{
		{"user agent", "policies:\n  - {name: a, limit: 10, window: 1m, key: \"header:User-Agent\", on_missing_key: skip}\n", []string{"a (line 2)", "header:User-Agent", "new value"}},
		{"api key with fallback", "policies:\n  - {name: a, limit: 10, window: 1m, key: \"header:X-Api-Key\", fallback: [ip]}\n", []string{"header:X-Api-Key", "new value"}},
		{"cookie and route", "policies:\n  - {name: a, limit: 10, window: 1m, key: [\"cookie:sid\", route], routes: [\"POST /login\"], on_missing_key: skip}\n", []string{"cookie:sid", "new value"}},
		{"forwarding header", "policies:\n  - {name: a, limit: 10, window: 1m, key: \"header:X-Real-IP\", on_missing_key: skip}\n", []string{"header:X-Real-IP", "trusted_proxies"}},
		{"ip policy over all", "policies:\n  - {name: ip, limit: 100, window: 1m}\n  - {name: a, limit: 10, window: 1m, key: \"header:X-Api-Key\", on_missing_key: skip}\n", nil},
		{"ip policy on the same route", "policies:\n  - {name: ip, limit: 100, window: 1m, routes: [\"POST /login\"]}\n  - {name: a, limit: 10, window: 1m, key: \"header:X-Api-Key\", routes: [\"POST /login\"], on_missing_key: skip}\n", nil},
		{"ip policy on another route", "policies:\n  - {name: ip, limit: 100, window: 1m, routes: [\"GET /x\"]}\n  - {name: a, limit: 10, window: 1m, key: \"header:X-Api-Key\", routes: [\"POST /login\"], on_missing_key: skip}\n", []string{"a (line 3)", "header:X-Api-Key"}},
		{"header with ip", "policies:\n  - {name: a, limit: 10, window: 1m, key: [ip, \"header:User-Agent\"], on_missing_key: skip}\n", []string{"header:User-Agent", "new value"}},
		{"header fallback after user", "policies:\n  - {name: a, limit: 10, window: 1m, key: user, fallback: [\"header:X-Device\"], on_missing_key: skip}\n", []string{"header:X-Device", "new value"}},
		{"header fallback after ip", "policies:\n  - {name: a, limit: 10, window: 1m, key: ip, fallback: [\"header:X-Device\"], on_missing_key: skip}\n", nil},
		{"user", "policies:\n  - {name: a, limit: 10, window: 1m, key: user, fallback: [ip]}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lintMatching(t, tc.doc, "chooses")
			switch {
			case tc.want == nil && len(got) != 0:
				t.Errorf("advice %q, want none on a key the client chooses", got)
			case tc.want != nil && len(got) != 1:
				t.Errorf("advice %q, want one on a key the client chooses, holding %q", got, tc.want)
			case tc.want != nil:
				for _, w := range tc.want {
					if !strings.Contains(got[0], w) {
						t.Errorf("advice %q does not say %q", got[0], w)
					}
				}
			}
		})
	}
}

// TestLintOneBucketIsAFixedWindow: sliding_buckets with buckets: 1 is the
// fixed window (DESIGN: B=1), whose boundary burst (2 x limit in a moment:
// 100 at 59 s and 100 at 60 s all admitted under 100 per minute) check
// advises on for fixed_window but passed in silence here. Two buckets or
// more draw no such advice.
func TestLintOneBucketIsAFixedWindow(t *testing.T) {
	for _, tc := range []struct {
		buckets string
		want    bool
	}{{"1", true}, {"2", false}, {"60", false}} {
		got := lintMatching(t, "policies:\n  - {name: a, limit: 100, window: 1m, algorithm: sliding_buckets, buckets: "+tc.buckets+"}\n", "200")
		if tc.want && (len(got) != 1 || !strings.Contains(got[0], "buckets: 1")) {
			t.Errorf("buckets: %s: advice %q, want one on the boundary burst of 200 naming buckets: 1", tc.buckets, got)
		}
		if !tc.want && len(got) != 0 {
			t.Errorf("buckets: %s: advice %q, want none on a boundary burst", tc.buckets, got)
		}
	}
}

// TestLintKeySharedByAllClients: a key that tells no client apart (route,
// method, or those with global) on every request is one allowance per
// route or method shared by all clients, which one client can use up, as
// key global is; check advised on global alone. A key with a client part
// (ip, user), and a shared key on chosen routes or methods (a capacity
// limit for them), draw no such advice.
func TestLintKeySharedByAllClients(t *testing.T) {
	for _, tc := range []struct {
		key, scope string
		want       bool
	}{
		{"global", "", true},
		{"route", "", true},
		{"method", "", true},
		{"[route, method]", "", true},
		{"[ip, route]", "", false},
		{"user", ", fallback: [ip]", false},
		{"route", ", routes: [\"POST /login\"]", false},
		{"global", ", methods: [POST]", false},
	} {
		got := lintMatching(t, "policies:\n  - {name: a, limit: 100, window: 1m, key: "+tc.key+tc.scope+"}\n", "shared by all clients")
		if tc.want && len(got) != 1 {
			t.Errorf("key %s%s: advice %q, want one on an allowance shared by all clients", tc.key, tc.scope, got)
		}
		if !tc.want && len(got) != 0 {
			t.Errorf("key %s%s: advice %q, want none on an allowance shared by all clients", tc.key, tc.scope, got)
		}
	}
}

// TestLintPrefixesSharedByMany: an ipv4_prefix under 24 or an ipv6_prefix
// under 48 makes one key of many clients' addresses (65536 IPv4
// addresses at /16; at /32, 2^32 subscribers' /64s), so that one client
// uses up the allowance of all of them; check said nothing.
// /24 to /32 and /48 to /64, or prefixes no ip key reads, draw no advice.
func TestLintPrefixesSharedByMany(t *testing.T) {
	for _, tc := range []struct {
		doc, want string // want: words of the advice; "": none
	}{
		{"ipv4_prefix: 16\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", "65536 addresses"},
		{"ipv4_prefix: 8\npolicies:\n  - {name: a, limit: 10, window: 1m, key: [ip, route]}\n", "16777216 addresses"},
		{"ipv6_prefix: 32\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", "/64"},
		{"ipv4_prefix: 24\nipv6_prefix: 48\npolicies:\n  - {name: a, limit: 10, window: 1m}\n", ""},
		{"ipv4_prefix: 8\nipv6_prefix: 16\npolicies:\n  - {name: a, limit: 10, window: 1m, key: user}\n", ""},
	} {
		got := lintMatching(t, tc.doc, "prefix", "one client uses up")
		if tc.want == "" && len(got) != 0 {
			t.Errorf("%s: advice %q, want none on a prefix shared by many", tc.doc, got)
		}
		if tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: advice %q, want one on a prefix shared by many, saying %q", tc.doc, got, tc.want)
		}
	}
}
