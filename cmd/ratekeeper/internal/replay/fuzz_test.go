package replay

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// FuzzEngineAdd replays arbitrary requests: odd methods, paths, addresses
// and users must be counted (matched, keyed or not), never panic or fail.
func FuzzEngineAdd(f *testing.F) {
	f.Add("GET", "/items/7", "192.0.2.1", "", int64(0))
	f.Add("POST", "/login", "[2001:db8::1]:443", "ann", int64(1e9))
	f.Add("CONNECT", "//a/../b/%zz", "host.example", "\x00", int64(-5e9))
	f.Add("", "", "", "", int64(1<<62))
	cfg := parse(f, `policies:
  - {name: ip, limit: 2, window: 1s}
  - {name: login, algorithm: sliding_log, limit: 1, window: 1m, key: [ip, user], fallback: ip, routes: ["POST /login"]}
  - {name: route, limit: 5, window: 1s, key: route, on_missing_key: skip}
`)
	// Reorder -1: each request is decided as it is added, not held back.
	e, err := New(cfg, Options{Routes: []string{"/items/{id}", "/a/{x...}"}, Reorder: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, path, addr, user string, ns int64) {
		en := logparse.Entry{Time: time.Unix(0, ns), Method: method, Path: path, Addr: addr, User: user}
		if err := e.Add(&en); err != nil {
			t.Fatalf("Add(%+v) = %v", en, err)
		}
	})
}
