package policy_test

import "testing"

// TestConfigRoutesJoinedInOneString: several routes written as one
// string ('/a, /b', as a key's parts or methods may be) are told to be
// written as a list, as key: 'ip, user' and methods: 'GET, POST' are; the
// message spoke only of a blank in the path. ("/a,/b" is one path, which
// may hold a comma.)
func TestConfigRoutesJoinedInOneString(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const blank = ` holds a blank or a control character in its path (outside a chi regexp): the method goes first ("POST /login"), and a space in a path is written %20`
	for _, tc := range []struct{ routes, want string }{
		{"'/a, /b'", `policy: f.yaml:5:13: policies[0].routes: "/a, /b"` + blank + `; write several routes as a list: ["/a", "/b"]`},
		{"['GET /a, POST /b']", `policy: f.yaml:5:14: policies[0].routes: "GET /a, POST /b"` + blank + `; write several routes as a list: ["GET /a", "POST /b"]`},
	} {
		wantErrors(t, tc.routes, pol+"    routes: "+tc.routes+"\n", []string{tc.want})
	}
	wantAccepted(t, "routes: ['/a,/b']\n")
}
