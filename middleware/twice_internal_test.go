package middleware

import "testing"

// TestWithParam: restateOuter sets one parameter of one member of an IETF
// line, by the member's exact name, and keeps the rest byte for byte.
func TestWithParam(t *testing.T) {
	for _, c := range []struct {
		line, name, param string
		v                 int64
		want              string
	}{
		// The member alone, first, last, in the middle.
		{`"p";q=8;w=60`, "p", "q", 5, `"p";q=5;w=60`},
		{`"p";r=7;t=50`, "p", "r", 4, `"p";r=4;t=50`},
		{`"a";r=1;t=1, "p";r=17;t=50`, "p", "r", 4, `"a";r=1;t=1, "p";r=4;t=50`},
		{`"p";r=7;t=50, "b";r=7;t=2`, "p", "r", 0, `"p";r=0;t=50, "b";r=7;t=2`},
		{`"a";q=1;w=1, "p";q=8;w=60, "b";q=2;w=2`, "p", "q", 5, `"a";q=1;w=1, "p";q=5;w=60, "b";q=2;w=2`},
		// A pk after the parameter stays.
		{`"p";r=7;t=50;pk=:AAAAAAAAAAA=:`, "p", "r", 3, `"p";r=3;t=50;pk=:AAAAAAAAAAA=:`},
		// Another member whose name starts with the name, or holds it.
		{`"pp";q=8;w=60, "p";q=8;w=60`, "p", "q", 5, `"pp";q=8;w=60, "p";q=5;w=60`},
		{`"xp";q=8;w=60`, "p", "q", 5, `"xp";q=8;w=60`},
		// No such member, no such parameter, an empty line.
		{`"a";q=8;w=60`, "p", "q", 5, `"a";q=8;w=60`},
		{`"p";w=60`, "p", "q", 5, `"p";w=60`},
		{``, "p", "q", 5, ``},
	} {
		if got := withParam(c.line, c.name, c.param, c.v); got != c.want {
			t.Errorf("withParam(%q, %q, %q, %d) = %q, want %q", c.line, c.name, c.param, c.v, got, c.want)
		}
	}
}
