package replay

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A forwardedRequest is a request as a server behind proxies gets it: the
// connecting peer and the X-Forwarded-For header as sent ("" for none),
// which clients fill as they please ("unknown", as some proxies and
// clients write it for an address they do not know).
type forwardedRequest struct{ peer, xff string }

var unknownXFFRequests = []forwardedRequest{
	{"10.0.0.2", "unknown, 203.0.113.7"},
	{"10.0.0.2", "unknown,203.0.113.7"},
	{"10.0.0.2", "unknown, 203.0.113.7, 10.0.0.3"},
	{"10.0.0.2", "unknown, unknown, 203.0.113.8"},
	{"10.0.0.2", "not an address, 203.0.113.9"},
	{"10.0.0.2", ", 203.0.113.10"},
	{"10.0.0.2", "unknown, [2001:db8::7]:443"},
	{"10.0.0.2", "203.0.113.7, unknown"},
	{"10.0.0.2", "unknown"},
	{"10.0.0.2", "198.51.100.1, 203.0.113.11, 10.0.0.3"},
	{"192.0.2.50", "unknown, 203.0.113.7"},
	{"192.0.2.50", "203.0.113.7, unknown"},
}

// middlewareKeys serves reqs through the middleware built from doc, with
// httptest through a ServeMux, and returns the key each request was
// limited under, or "no key" for one refused for want of a key.
func middlewareKeys(t *testing.T, doc string, reqs []forwardedRequest) []string {
	t.Helper()
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := middleware.FromConfig(store, parse(t, doc), middleware.CheckForwarding(false)) // no warning of the header without trusted proxies: the point here
	if err != nil {
		t.Fatal(err)
	}
	var key string
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if res, ok := middleware.FromContext(r.Context()); ok && res.Len() == 1 {
			key = res.Key(0)
		}
	})))
	var keys []string
	for _, rq := range reqs {
		key = ""
		req := httptest.NewRequest("GET", "http://replay.invalid/", nil)
		req.RemoteAddr = net.JoinHostPort(rq.peer, "40000")
		if rq.xff != "" {
			req.Header.Set("X-Forwarded-For", rq.xff)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		switch {
		case w.Code == http.StatusBadRequest && w.Header().Get("Content-Type") == "application/problem+json":
			key = "no key"
		case w.Code != http.StatusOK || key == "":
			t.Fatalf("%+v: the middleware answered %d, key %q", rq, w.Code, key)
		}
		keys = append(keys, key)
	}
	return keys
}

// replayKeys reads the log through logparse and returns the key the
// replay of doc takes for each entry as it decides it (the request built
// from the entry, its key found by the policy set), or "no key".
func replayKeys(t *testing.T, doc, log string) []string {
	t.Helper()
	r, err := logparse.NewReader(strings.NewReader(log), "access.log", logparse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	entries := readEntries(t, r)
	if r.MalformedCount() != 0 {
		t.Fatalf("malformed lines: %v", r.Samples())
	}
	e, err := New(parse(t, doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range entries {
		req := e.req.build(&entries[i])
		err := e.set.Prepare(req, e.set.Match(req), &e.res)
		var ke *policy.KeyError
		switch {
		case errors.As(err, &ke):
			keys = append(keys, "no key")
		case err != nil:
			t.Fatal(err)
		default:
			keys = append(keys, strings.Clone(e.res.Key(0))) // valid until the next Prepare
		}
	}
	return keys
}

// TestReplayKeysUnknownForwardedForAsMiddleware: nginx logs the
// X-Forwarded-For header as it came, "unknown, 203.0.113.7" too, in its
// "main" format ("$http_x_forwarded_for" last) and JSON lines; the replay
// keys each request as the middleware keys the request of that peer and
// that header, under trusted proxies, trusted hops or neither. The
// middleware walks the header from the right and reads no entry left of
// the client, so an "unknown" there changes nothing, and one it reaches
// is no client (no key). The replay dropped the header of the main
// format unless every entry was an address: "unknown, 203.0.113.7"
// behind a trusted proxy, the middleware's 203.0.113.7, had no key.
func TestReplayKeysUnknownForwardedForAsMiddleware(t *testing.T) {
	const policies = "policies:\n  - {name: ip, limit: 1000, window: 1m}\n"
	var mainLog, jsonLog strings.Builder
	for i, rq := range unknownXFFRequests {
		xff := rq.xff
		if xff == "" {
			xff = "-"
		}
		fmt.Fprintf(&mainLog, "%s - - [10/Mar/2024:12:00:%02d +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl/8.5\" \"%s\"\n", rq.peer, i, xff)
		fmt.Fprintf(&jsonLog, `{"time":"2024-03-10T12:00:%02dZ","remote_addr":%q,"request":"GET / HTTP/1.1","status":200,"http_x_forwarded_for":%q}`+"\n", i, rq.peer, rq.xff)
	}
	for _, trust := range []string{
		"trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n",
		"trusted_hops: 1\n",
		"trusted_hops: 2\n",
		"",
	} {
		doc := trust + policies
		want := middlewareKeys(t, doc, unknownXFFRequests)
		for _, log := range []struct{ format, text string }{{"nginx main", mainLog.String()}, {"JSON lines", jsonLog.String()}} {
			got := replayKeys(t, doc, log.text)
			if len(got) != len(want) {
				t.Fatalf("%q, %s: %d keys, want %d", trust, log.format, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%q, %s: peer %s, X-Forwarded-For %q: replay key %q, middleware %q", trust, log.format, unknownXFFRequests[i].peer, unknownXFFRequests[i].xff, got[i], want[i])
				}
			}
		}
	}
}

// TestReplayKeysUnknownLeadingForwardedForAsMiddleware: Apache behind a
// proxy logs the X-Forwarded-For header first ("%{X-Forwarded-For}i %l
// %u %t ..."), an "unknown" in it as sent, and not the peer (the proxy):
// under trusted proxies or hops the replay keys each request as the
// middleware behind that proxy (10.0.0.2, trusted) keys it.
func TestReplayKeysUnknownLeadingForwardedForAsMiddleware(t *testing.T) {
	const policies = "policies:\n  - {name: ip, limit: 1000, window: 1m}\n"
	var reqs []forwardedRequest
	var log strings.Builder
	for i, xff := range []string{
		"unknown, 203.0.113.7",
		"unknown,203.0.113.7",
		"unknown, 203.0.113.7, 10.0.0.3",
		"unknown, unknown, 203.0.113.8",
		"unknown, [2001:db8::7]:443",
		"203.0.113.7, unknown",
		"unknown, 203.0.113.9 , 10.0.0.4",
		"unknown , 203.0.113.10",
	} {
		reqs = append(reqs, forwardedRequest{"10.0.0.2", xff})
		fmt.Fprintf(&log, "%s - - [10/Mar/2024:12:00:%02d +0000] \"GET / HTTP/1.1\" 200 5\n", xff, i)
	}
	for _, trust := range []string{
		"trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n",
		"trusted_hops: 1\n",
		"trusted_hops: 2\n",
	} {
		doc := trust + policies
		want := middlewareKeys(t, doc, reqs)
		got := replayKeys(t, doc, log.String())
		if len(got) != len(want) {
			t.Fatalf("%q: %d keys, want %d", trust, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%q: X-Forwarded-For %q first: replay key %q, middleware %q", trust, reqs[i].xff, got[i], want[i])
			}
		}
	}
}
