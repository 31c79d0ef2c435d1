package app_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/app"
)

func TestParseProxies(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.0.0.0/8", "[10.0.0.0/8] <nil>"},
		{"127.0.0.1", "[127.0.0.1/32] <nil>"},
		{"10.0.0.0/8, 192.0.2.7,::1", "[10.0.0.0/8 192.0.2.7/32 ::1/128] <nil>"},
		// Refused here, so that the flag package names the flag: from
		// keyfunc.IP the error named neither the flag nor the example.
		{"10.0.0.5/16", `[] 10.0.0.5/16 has bits set past its /16: write 10.0.0.5 for that proxy alone, or 10.0.0.0/16 for its whole network`},
		{"foo", `[] "foo" is neither an address nor a network`},
		{"10.0.0.0/8,", `[] "" is neither an address nor a network`},
	} {
		p, err := app.ParseProxies(c.in)
		if got := fmt.Sprint(p, " ", err); got != c.want {
			t.Errorf("ParseProxies(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
