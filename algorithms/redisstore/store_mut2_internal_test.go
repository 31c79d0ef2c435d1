package redisstore

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestReleaseLetsLargeRequestsGo: release returns no unusually large
// request to the pool, one with more than 64 keys' room or more than 512
// arguments' room, each alone: the pool never hands it out again. (A
// request released to the pool comes back from the next Get on the same
// goroutine, unless the pool dropped it or held another: each case tries
// several times, keeping what Get returns out of the pool.)
func TestReleaseLetsLargeRequestsGo(t *testing.T) {
	for _, c := range []struct {
		name       string
		keys, args int
	}{
		{"65 keys", 65, 0},
		{"513 arguments", 0, 513},
	} {
		for range 8 {
			r := &request{keys: make([]string, 0, c.keys), argBuf: make([]any, 0, c.args)}
			r.release()
			if reqPool.Get().(*request) == r {
				t.Fatalf("a request with room for %s came back from the pool after release", c.name)
			}
		}
	}
}

// TestReleaseDropsReferences: a request released to the pool keeps no
// reference to a Take's data, up to its slices' capacities: not the
// caller's checks, nor the specs' infos, keys, hash tags or arguments,
// which a pooled request would otherwise keep alive.
func TestReleaseDropsReferences(t *testing.T) {
	si := &specInfo{}
	r := &request{
		checks: make([]algorithms.Check, 1),
		infos:  []*specInfo{si},
		keys:   []string{"rk:a", "rk:b"}[:1],
		tags:   []string{"{a}"},
		argBuf: []any{"c", "x", "y"}[:2],
	}
	r.release()
	if r.checks != nil {
		t.Error("a released request keeps the caller's checks")
	}
	for i, v := range r.infos {
		if v != nil {
			t.Errorf("a released request keeps infos[%d]", i)
		}
	}
	for i, v := range r.keys[:cap(r.keys)] {
		if v != "" {
			t.Errorf("a released request keeps key %d (%q), within its capacity", i, v)
		}
	}
	for i, v := range r.tags {
		if v != "" {
			t.Errorf("a released request keeps tag %d (%q)", i, v)
		}
	}
	for i, v := range r.argBuf[:cap(r.argBuf)] {
		if v != nil {
			t.Errorf("a released request keeps argument %d (%v), within its capacity", i, v)
		}
	}
}
