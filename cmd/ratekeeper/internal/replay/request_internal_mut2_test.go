package replay

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestPatternCacheBounded: the builder asks the router once per method and
// path, and remembers at most maxCached answers; paths past that are
// asked each time, and still get their pattern.
func TestPatternCacheBounded(t *testing.T) {
	var b requestBuilder
	asked := 0
	b.init(func(r *http.Request) string {
		asked++
		return "GET " + r.URL.Path
	})
	en := logparse.Entry{Method: "GET", Addr: "192.0.2.1"}
	for i := range maxCached + 3 {
		en.Path = fmt.Sprintf("/p/%d", i)
		b.build(&en)
		if b.pattern != "GET "+en.Path {
			t.Fatalf("%s: pattern %q", en.Path, b.pattern)
		}
	}
	n := 0
	for _, byPath := range b.patterns {
		n += len(byPath)
	}
	if n != maxCached || b.cached != maxCached {
		t.Errorf("%d patterns cached (count %d), want maxCached, %d", n, b.cached, maxCached)
	}
	asked = 0
	for _, p := range []string{"/p/0", "/p/0", fmt.Sprintf("/p/%d", maxCached+1), fmt.Sprintf("/p/%d", maxCached+1)} {
		en.Path = p
		b.build(&en)
		if b.pattern != "GET "+p {
			t.Errorf("%s: pattern %q", p, b.pattern)
		}
	}
	if asked != 2 {
		t.Errorf("router asked %d times for a cached path twice and an uncached one twice; want 2", asked)
	}
}
