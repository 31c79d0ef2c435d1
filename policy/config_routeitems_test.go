package policy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigRouteItemErrorAt: a bad entry of methods or routes is reported
// at its own position, each one, as a bad entry of trusted_proxies or key
// is. They were reported once, at the start of the list: in a block list
// whose second entry was bad, the error pointed at the line of the first
// entry, which was fine, and a second bad entry was not reported at all.
func TestConfigRouteItemErrorAt(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		doc   string
		field string
		at    []string // line:col of each error, in order
	}{
		{pol + "    routes:\n      - /ok\n      - bad\n", "policies[0].routes", []string{"7:9"}},
		{pol + "    routes:\n      - bad\n      - /ok\n      - worse\n", "policies[0].routes", []string{"6:9", "8:9"}},
		{pol + "    routes: [/ok, bad]\n", "policies[0].routes", []string{"5:19"}},
		{pol + "    methods:\n      - POST\n      - post\n", "policies[0].methods", []string{"7:9"}},
		{pol + "    methods: [GET, \"GE T\", put]\n", "policies[0].methods", []string{"5:20", "5:28"}},
		// A route on a method the methods exclude, at that route.
		{pol + "    methods: [GET]\n    routes:\n      - GET /ok\n      - POST /x\n", "policies[0].routes", []string{"8:9"}},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "r.yaml")
		var at []string
		for _, ce := range policy.ConfigErrors(err) {
			if ce.Field != tc.field {
				t.Errorf("ParseConfig(%q): error %v; want it at %s", tc.doc, ce, tc.field)
			}
			at = append(at, fmt.Sprintf("%d:%d", ce.Line, ce.Column))
		}
		if !slices.Equal(at, tc.at) {
			t.Errorf("ParseConfig(%q) = %v\nerrors at %q; want %q", tc.doc, err, at, tc.at)
		}
	}
}
