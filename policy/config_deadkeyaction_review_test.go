package policy_test

import (
	"testing"
)

// TestConfigDeadOnMissingKeyIsRefused: on_missing_key decides what happens
// to a request whose key cannot be extracted (the key and every fallback
// missing, or a route part's keyfunc.ErrNoRoute, which keyfunc.FirstOf
// does not fall back past). A key of parts that always find one (global,
// method), or a fallback of them tried after keys that only ever fall
// back, finds a key for every request: on_missing_key is never used, and
// "key: global, on_missing_key: skip" reads as a policy some requests
// escape when it limits all of them. It was accepted; it is refused at
// the field, with the file's other problems.
func TestConfigDeadOnMissingKeyIsRefused(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, file, doc string
		want            []string
	}{
		{"global, with the file's other problems", "c.yaml",
			"policies:\n  - name: a\n    limit: 0\n    window: 1s\n" +
				"  - name: b\n    limit: 1\n    window: 1s\n    key: global\n    on_missing_key: skip\n",
			[]string{
				"3:12 policies[0].limit: must be positive, got 0",
				"9:21 policies[1].on_missing_key: is never used: key global finds a key for every request",
			}},
		{"method", "c.yaml", head + "    key: method\n    on_missing_key: reject_403\n",
			[]string{"6:21 policies[0].on_missing_key: is never used: key method finds a key for every request"}},
		{"the default action, stated", "c.yaml", head + "    key: [global, method]\n    on_missing_key: reject_400\n",
			[]string{"6:21 policies[0].on_missing_key: is never used: key global+method finds a key for every request"}},
		{"a last fallback that never fails", "c.yaml", head + "    key: user\n    fallback: [ip, global]\n    on_missing_key: skip\n",
			[]string{"7:21 policies[0].on_missing_key: is never used: fallback[1] global finds a key for every request"}},
		{"beside a dead fallback", "c.yaml", head + "    key: global\n    fallback: ip\n    on_missing_key: skip\n",
			[]string{
				"6:15 policies[0].fallback: is never used: key global finds a key for every request",
				"7:21 policies[0].on_missing_key: is never used: key global finds a key for every request",
			}},
		{"json", "c.json", `{"policies": [{"name": "a", "limit": 1, "window": "1s", "key": "method", "on_missing_key": "skip"}]}`,
			[]string{"1:92 policies[0].on_missing_key: is never used: key method finds a key for every request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, tc.doc, tc.file, tc.want)
		})
	}
}

// TestConfigLiveOnMissingKeyIsAccepted: on_missing_key stays valid where
// some request has no key: a key or last fallback that can be missing, and
// a route part before a fallback that never fails (keyfunc.FirstOf returns
// keyfunc.ErrNoRoute rather than fall back past it, and on_missing_key
// decides). A policy keyed by global without on_missing_key is valid too.
func TestConfigLiveOnMissingKeyIsAccepted(t *testing.T) {
	wantAccepted(t,
		"key: user\n    on_missing_key: skip\n",
		"key: [global, ip]\n    on_missing_key: reject_403\n",
		"on_missing_key: skip\n",
		"key: user\n    fallback: ip\n    on_missing_key: skip\n",
		"key: [route, header:X-A]\n    fallback: global\n    on_missing_key: skip\n",
		"key: [route, method]\n    on_missing_key: skip\n",
		"key: user\n    fallback: [[route, ip], global]\n    on_missing_key: reject_403\n",
		"key: global\n",
		"key: method\n",
	)
}
