package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestRouteCacheBoundedInBytes: the cache of the route each method and
// path resolves to keeps a bounded number of bytes of paths, not only of
// entries: it kept up to 65,536 paths whatever their length, and a
// scanner's distinct paths of up to 64 KiB each (a line's most) could fill
// it with 4 GiB. A 600 MB log of 20,000 lines with distinct 30 KB paths
// replayed at 1.5 GB peak RSS under a policy with a route.
func TestRouteCacheBoundedInBytes(t *testing.T) {
	const doc = "policies:\n  - {name: login, limit: 5, window: 1m, routes: [\"POST /login\"]}\n"
	const paths, pathLen = 2000, 16 << 10
	e, err := New(parse(t, doc), Options{Reorder: -1})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", pathLen)
	for i := range paths {
		en := logparse.Entry{Time: t0, Addr: "192.0.2.1", Method: "GET", Path: fmt.Sprintf("/%d/%s", i, long)}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	var n, bytes int
	for method, byPath := range e.req.patterns {
		for path := range byPath {
			n++
			bytes += len(method) + len(path)
		}
	}
	if bytes > maxCachedBytes {
		t.Errorf("the route cache holds %d paths, %d bytes; want at most %d bytes (maxCachedBytes)", n, bytes, maxCachedBytes)
	}
	// Paths past the cache are still resolved, each time.
	en := logparse.Entry{Time: t0, Addr: "192.0.2.1", Method: "POST", Path: "/login"}
	if err := e.Add(&en); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 1 || rep.Unmatched != paths {
		t.Errorf("%d requests, %d unmatched; want 1 (POST /login) and %d", rep.Requests, rep.Unmatched, paths)
	}
}
