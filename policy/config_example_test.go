package policy_test

import (
	"fmt"

	"github.com/ratekeeper/ratekeeper/policy"
)

// A five-line file is enough: a policy with a name, a limit and a window
// gets the sliding window counter, keyed by client IP.
func ExampleParseConfig() {
	cfg, err := policy.ParseConfig([]byte(`
policies:
  - name: per-minute
    limit: 100
    window: 1m
  - name: login
    algorithm: sliding_log
    limit: 5
    window: 1m
    key: [ip, header:X-Login-User]
    fallback: ip
    routes: ["POST /login"]
`), "ratekeeper.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range cfg.Policies {
		d := cfg.Definitions[i]
		fmt.Printf("%s: %v, key %s, routes %q\n", p, p.Spec(), d.KeyString(), d.Routes)
	}
	fmt.Println("headers:", cfg.Headers, "failure mode:", cfg.FailureMode)
	// Output:
	// "per-minute";q=100;w=60: sliding_window 100/1m0s, key ip, routes []
	// "login";q=5;w=60: sliding_log 5/1m0s, key ip+header:X-Login-User | ip, routes ["POST /login"]
	// headers: ietf failure mode: open
}

// Errors name the file, the line and column, and the field.
func ExampleParseConfig_error() {
	_, err := policy.ParseConfig([]byte(`
policies:
  - name: per-minute
    limit: 100
    window: 60
`), "ratekeeper.yaml")
	fmt.Println(err)
	// Output:
	// policy: ratekeeper.yaml:5:13: policies[0].window: 60 has no unit; write it as 1s, 500ms, 1m or 24h
}

// Load reads a file; the policies are ready for middleware.New.
func ExampleLoad() {
	cfg, err := policy.Load("../examples/config/ratekeeper.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range cfg.Policies {
		fmt.Printf("line %d: %s, key %s\n", cfg.Definitions[i].Line, p.Spec(), cfg.Definitions[i].KeyString())
	}
	fmt.Println("trusted proxies:", cfg.TrustedProxies)
	// Output:
	// line 38: token_bucket 10/1s burst=20, key ip
	// line 43: sliding_window 300/1m0s, key ip
	// line 50: sliding_log 5/1m0s, key ip+header:X-Login-User | ip
	// line 61: sliding_buckets 2000/24h0m0s buckets=24, key user
	// trusted proxies: [10.0.0.0/8 198.51.100.254/32]
}
