package policy_test

import "testing"

// TestConfigLoneSurrogateEscape: an escape that writes half of a UTF-16
// surrogate pair alone ("\udce9", as Python's json and yaml modules write
// a byte that was not text) is no character: the JSON decoder and the
// YAML parser replaced it with U+FFFD, and a route "/caf\udce9" loaded as
// "/caf\ufffd", a path no request has, silently. It is refused where it
// is written; U+FFFD written as such, a pair of halves, and an escaped
// backslash before the letters are not.
func TestConfigLoneSurrogateEscape(t *testing.T) {
	const head = "{\"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\", \"routes\": ["
	for _, tc := range []struct{ name, doc, want string }{
		{"json route", head + `"/caf\udce9"]}]}`,
			`policy: f.json:1:68: policies[0].routes[0]: the escape \udce9 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
		{"json high half", head + `"/a\uD800/b"]}]}`,
			`policy: f.json:1:68: policies[0].routes[0]: the escape \uD800 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
		{"json name", `{"policies": [{"name": "x\udce9", "limit": 1, "window": "1s"}]}`,
			`policy: f.json:1:24: policies[0].name: the escape \udce9 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
		{"yaml route", "policies:\n  - name: a\n    limit: 1\n    window: 1s\n    routes: [\"/caf\\udce9\"]\n",
			`policy: f.yaml:5:14: policies[0].routes[0]: the escape \udce9 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
		{"yaml long escape", "policies:\n  - name: a\n    limit: 1\n    window: 1s\n    routes:\n      - \"/caf\\U0000DCE9\"\n",
			`policy: f.yaml:6:9: policies[0].routes[0]: the escape \U0000DCE9 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
		{"yaml after CRLF, a tab and text outside ASCII", "# caf\u00e9\r\npolicies:\r\n  - name: a\r\n    limit: 1\r\n    window:\t1s\r\n    routes: [\"/\u00e9\", \"/caf\\udce9\"]\r\n",
			`policy: f.yaml:6:20: policies[0].routes[1]: the escape \udce9 writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself`},
	} {
		name := "f.json"
		if tc.doc[0] != '{' {
			name = "f.yaml"
		}
		wantErrorsIn(t, tc.name, name, tc.doc, []string{tc.want})
	}
	for _, doc := range []string{
		head + `"/caf\ufffd", "/\ud83d\ude00", "/a\\udce9", "/\u00e9"]}]}`,
		"policies:\n  - {name: a, limit: 1, window: 1s, routes: [\"/caf\\uFFFD\", \"/\\ud83d\\ude00\", \"/a\\\\udce9\", \"/\ufffd\"]}\n",
	} {
		name := "ok.json"
		if doc[0] != '{' {
			name = "ok.yaml"
		}
		wantErrorsIn(t, name, name, doc, nil)
	}
}
