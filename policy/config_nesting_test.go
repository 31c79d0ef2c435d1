package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigNestingAfterQuoteInPlainScalar: a quote inside a plain scalar
// (it's, 5") is a character like any other, but the nesting check took it
// for the start of a quoted string and counted no bracket after it, so a
// deep flow collection that followed went to the YAML parser, whose time
// is quadratic in the depth: a 240 KB file held ParseConfig (and a
// reloading Watcher, and ratekeeper check) for about two minutes. The
// depth is now counted on the parser's own tokens.
func TestConfigNestingAfterQuoteInPlainScalar(t *testing.T) {
	for _, plain := range []string{"it's", `5"`, "a'b'c", `say "hi`} {
		doc := "version: " + plain + "\npolicies: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n"
		_, err := policy.ParseConfig([]byte(doc), "deep.yaml")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != 2 || ces[0].Column != 75 || !strings.Contains(ces[0].Reason, "nests more than 64 levels") {
			t.Errorf("after %s: error %v; want one, at 2:75, that it nests more than 64 levels", plain, err)
		}
	}
	// Quoted scalars still hold brackets that do not count, in block and
	// in flow context, as do comments.
	doc := "policies:\n  - name: a # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n    limit: 1\n    window: 1s\n" +
		"    methods: ['" + strings.Repeat("[", 100) + "', \"" + strings.Repeat("{", 100) + "\"]\n    routes: \"/" + strings.Repeat("[", 100) + "\"\n"
	_, err := policy.ParseConfig([]byte(doc), "q.yaml")
	ces := policy.ConfigErrors(err)
	if len(ces) != 2 {
		t.Errorf("quoted and commented brackets: error %v, want only the two bad methods", err)
	}
	for _, ce := range ces {
		if ce.Field != "policies[0].methods" {
			t.Errorf("quoted and commented brackets: error %v, want only the two bad methods", ce)
		}
	}
}
