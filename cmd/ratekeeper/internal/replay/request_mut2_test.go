package replay

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestEscapedPathMatchesRoute: a path logged percent-encoded is the
// request's path decoded, as a server's router sees it: "/us%65rs/ann"
// is a request to GET /users/{name}.
func TestEscapedPathMatchesRoute(t *testing.T) {
	const doc = "policies:\n  - {name: u, limit: 5, window: 1m, routes: [\"GET /users/{name}\"]}\n"
	rep := replayEntries(t, doc, Options{}, []logparse.Entry{at(0, "192.0.2.1", "/us%65rs/ann")})
	if rep.Requests != 1 || rep.Unmatched != 0 {
		t.Errorf("requests %d, unmatched %d; want the escaped path matched: 1, 0", rep.Requests, rep.Unmatched)
	}
}

// TestHeaderOnlyFromLogField: a header the log gives only as a named field
// (--json-header User-Agent=FIELD: the entry's UserAgent empty, the header
// among its Headers) is the request's header, the key of a header: part.
func TestHeaderOnlyFromLogField(t *testing.T) {
	const doc = "policies:\n  - {name: ua, limit: 5, window: 1m, key: \"header:User-Agent\"}\n"
	en := at(0, "192.0.2.1", "/")
	en.Headers = []logparse.Header{{Name: "User-Agent", Value: "bot/1"}}
	rep := replayEntries(t, doc, Options{}, []logparse.Entry{en})
	if p := rep.Policies[0]; p.Requests != 1 || p.NoKey != 0 {
		t.Errorf("requests %d, without a key %d (%s); want the header as key: 1, 0", p.Requests, p.NoKey, p.NoKeyReason)
	}
}

// TestLoggedRefererAndUserAgent: the Combined format's Referer and
// User-Agent are the request's headers, keys of header: parts; a line
// without them (the next one) has neither.
func TestLoggedRefererAndUserAgent(t *testing.T) {
	const doc = "policies:\n  - {name: h, limit: 5, window: 1m, key: [\"header:Referer\", \"header:User-Agent\"]}\n"
	en := at(0, "192.0.2.1", "/")
	en.Referer, en.UserAgent = "https://a.example/", "bot/1"
	rep := replayEntries(t, doc, Options{}, []logparse.Entry{en, at(1, "192.0.2.1", "/")})
	if p := rep.Policies[0]; p.Requests != 1 || p.NoKey != 1 {
		t.Errorf("requests %d, without a key %d; want 1 (the line with both headers), 1", p.Requests, p.NoKey)
	}
}
