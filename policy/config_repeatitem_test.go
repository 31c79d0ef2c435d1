package policy_test

import "testing"

// TestConfigRepeatedRouteOrMethod: a route or a method listed twice in one
// policy is refused at the second, as a key part written twice is: it
// adds nothing, and is most likely a slip for another one (/login for
// /logout). Both loaded silently. A route is the same when the routers
// read it the same ("GET /x" and "GET\t/x").
func TestConfigRepeatedRouteOrMethod(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"route", pol + "    routes: [/login, /logout, /login]\n", []string{
			`policy: f.yaml:5:31: policies[0].routes[2]: repeats routes[0] ("/login"): a route listed twice adds nothing`,
		}},
		{"route spelt apart", pol + "    routes: [\"GET /x\", \"GET\\t/x\"]\n", []string{
			`policy: f.yaml:5:24: policies[0].routes[1]: repeats routes[0] ("GET /x"): a route listed twice adds nothing`,
		}},
		{"method", pol + "    methods: [GET, POST, GET]\n", []string{
			`policy: f.yaml:5:26: policies[0].methods[2]: repeats methods[0] ("GET"): a method listed twice adds nothing`,
		}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
	wantAccepted(t, "routes: [\"GET /x\", \"POST /x\", /x, /x/]\n", "methods: [GET, HEAD]\n")
}
