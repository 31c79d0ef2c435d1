package replay

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestNoKeyReasonNamesTheClient: a policy keyed by ip that finds no client
// in a line said why ("RemoteAddr is not an IP address", "no
// X-Forwarded-For header") but not in what: a user had to guess which of
// the log's values the replay read as the client (Apache's
// %{X-Forwarded-For}i logs "-" for a request that came with none; a
// prefix before each line makes its first word the client). The reason
// gives the line's client field, and its X-Forwarded-For when it has one.
func TestNoKeyReasonNamesTheClient(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		en           logparse.Entry
		want         []string
	}{
		{"no address", "policies:\n  - {name: ip, limit: 5, window: 1s}\n",
			logparse.Entry{Time: t0, Addr: "-", Method: "GET", Path: "/"},
			[]string{`client "-"`}},
		{"trusted proxy, bad header", "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\npolicies:\n  - {name: ip, limit: 5, window: 1s}\n",
			logparse.Entry{Time: t0, Addr: "10.0.0.5", Method: "GET", Path: "/", Headers: []logparse.Header{{Name: "X-Forwarded-For", Value: "unknown"}}},
			[]string{`client "10.0.0.5"`, `X-Forwarded-For "unknown"`}},
	} {
		rep, text := replayOne(t, tc.config, tc.en)
		p := rep.Policies[0]
		for _, want := range tc.want {
			if p.NoKey != 1 || !strings.Contains(p.NoKeyReason, want) || !strings.Contains(text, want) {
				t.Errorf("%s: no key %d, reason %q, want it holding %s; report:\n%s", tc.name, p.NoKey, p.NoKeyReason, want, text)
			}
		}
	}
}
