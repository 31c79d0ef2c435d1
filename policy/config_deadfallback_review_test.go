package policy_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// configProblems formats the problems of a ParseConfig error as
// "line:col field: reason".
func configProblems(err error) []string {
	var out []string
	for _, ce := range policy.ConfigErrors(err) {
		out = append(out, fmt.Sprintf("%d:%d %s: %s", ce.Line, ce.Column, ce.Field, ce.Reason))
	}
	return out
}

// wantProblems fails t unless err holds exactly the problems want, as
// configProblems formats them.
func wantProblems(t *testing.T, err error, want []string) {
	t.Helper()
	if got := configProblems(err); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParseConfig problems:\n%q\nwant\n%q", got, want)
	}
}

// wantRefused fails t unless ParseConfig refuses doc, read as file, with
// exactly the problems want.
func wantRefused(t *testing.T, doc, file string, want []string) {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(doc), file)
	if err == nil {
		t.Fatalf("ParseConfig = %d policies, want an error", len(cfg.Policies))
	}
	wantProblems(t, err, want)
}

// wantAccepted fails t for each of policies, the fields after a policy's
// name, limit and window (indented as its other fields), that ParseConfig
// refuses.
func wantAccepted(t *testing.T, policies ...string) {
	t.Helper()
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, keys := range policies {
		if _, err := policy.ParseConfig([]byte(head+"    "+keys), "c.yaml"); err != nil {
			t.Errorf("%s: %v", keys, err)
		}
	}
}

// TestConfigDeadFallbackIsRefused: a fallback that can never be tried is
// refused at load, at the field, with the file's other problems. A key of
// parts that always find a key (global, method: keyfunc.Global and
// keyfunc.Method never fail) never falls back; and a key that needs every
// part that can be missing from one tried before it is missing whenever
// that one is (keyfunc.Join fails when a part does). Such
// a fallback was accepted and silently never used: "key: global,
// fallback: ip" reads as a per-client limit for clients without an
// address and is one allowance for everyone.
func TestConfigDeadFallbackIsRefused(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, file, doc string
		want            []string
	}{
		{"global, with the file's other problems", "c.yaml",
			"policies:\n  - name: a\n    limit: 0\n    window: 1s\n" +
				"  - name: b\n    limit: 1\n    window: 1s\n" +
				"  - name: c\n    limit: 1\n    window: 1s\n    key: global\n    fallback: ip\n",
			[]string{
				"3:12 policies[0].limit: must be positive, got 0",
				"12:15 policies[2].fallback: is never used: key global finds a key for every request",
			}},
		{"method", "c.yaml", head + "    key: method\n    fallback: [ip, user]\n",
			[]string{"6:15 policies[0].fallback: is never used: key method finds a key for every request"}},
		{"global joined with method", "c.yaml", head + "    key: [global, method]\n    fallback: [[user]]\n",
			[]string{"6:15 policies[0].fallback: is never used: key global+method finds a key for every request"}},
		{"after a fallback that never fails", "c.yaml", head + "    key: user\n    fallback: [global, ip, cookie:s]\n",
			[]string{"6:24 policies[0].fallback[1]: is never used, nor are the keys after it: fallback[0] global finds a key for every request"}},
		{"the key itself again", "c.yaml", head + "    key: user\n    fallback: user\n",
			[]string{"6:15 policies[0].fallback: is never used: it needs user too, so it is missing whenever key user is"}},
		{"a key holding the key's parts", "c.yaml", head + "    key: [ip, user]\n    fallback: [[user, header:X-A, ip], ip]\n",
			[]string{"6:16 policies[0].fallback[0]: is never used: it needs ip and user too, so it is missing whenever key ip+user is"}},
		{"a key needing what the key can miss", "c.yaml", head + "    key: [method, user]\n    fallback: [user, ip]\n",
			[]string{"6:16 policies[0].fallback[0]: is never used: it needs user too, so it is missing whenever key method+user is"}},
		{"a fallback holding an earlier fallback's parts", "c.yaml", head + "    key: user\n    fallback: [cookie:s, [ip, cookie:s], ip]\n",
			[]string{"6:26 policies[0].fallback[1]: is never used: it needs cookie:s too, so it is missing whenever fallback[0] cookie:s is"}},
		// A missing route is never fallen back past (keyfunc.FirstOf
		// returns keyfunc.ErrNoRoute): a key that can miss only its route
		// never falls back.
		{"route", "c.yaml", head + "    key: route\n    fallback: ip\n",
			[]string{"6:15 policies[0].fallback: is never used: key route misses a key only when the request has no route, and a missing route is never fallen back past (on_missing_key decides then)"}},
		{"route joined with method and global", "c.yaml", head + "    key: [method, route, global]\n    fallback: [user, global]\n",
			[]string{"6:15 policies[0].fallback: is never used: key method+route+global misses a key only when the request has no route, and a missing route is never fallen back past (on_missing_key decides then)"}},
		{"after a fallback of route", "c.yaml", head + "    key: user\n    fallback: [route, ip, global]\n",
			[]string{"6:23 policies[0].fallback[1]: is never used, nor are the keys after it: fallback[0] route misses a key only when the request has no route, and a missing route is never fallen back past (on_missing_key decides then)"}},
		{"json", "c.json", `{"policies": [{"name": "a", "limit": 1, "window": "1s", "key": "global", "fallback": ["ip"]}]}`,
			[]string{"1:86 policies[0].fallback: is never used: key global finds a key for every request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, tc.doc, tc.file, tc.want)
		})
	}
}

// TestConfigLiveFallbackIsAccepted: a fallback that some request takes
// stays valid: after a key that can be missing (ip: a RemoteAddr that is
// no address; user, header, cookie), also when joined with a part that
// never is (global+ip), and a last fallback that never fails (global).
func TestConfigLiveFallbackIsAccepted(t *testing.T) {
	wantAccepted(t,
		"key: ip\n    fallback: global\n",
		"key: [global, ip]\n    fallback: user\n",
		"key: [method, user]\n    fallback: ip\n",
		"key: user\n    fallback: [[ip, header:X-A], ip]\n",
		"key: [ip, header:X-Login-User]\n    fallback: [ip]\n",
		"key: user\n    fallback: [[cookie:session], ip]\n",
		"key: header:X-A\n    fallback: [cookie:s, [ip, user], global]\n",
		"key: [route, user]\n    fallback: ip\n",
		"key: user\n    fallback: [[route, ip], ip]\n",
	)
}
