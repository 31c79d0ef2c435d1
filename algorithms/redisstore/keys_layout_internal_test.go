package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestKeysEscaping: the layout the package doc states ("Keys and expiry"),
// which is where the state of every deployed store lives: a key without
// ':' is <prefix>:{<key>}:<spec>, a key "ns:rest" is
// <prefix>:{<rest>}:<ns>:<spec>, and the escaping keeps the bytes
// 0x21-0x7E but '%', '{' and '}', writes every other byte as %XX, and the
// empty string as "%". A byte at each edge of the kept range stays, one
// just past each edge is escaped.
func TestKeysEscaping(t *testing.T) {
	si := newSpecInfo(algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second})
	s := &Store{prefix: "rk"}
	for _, tc := range []struct{ key, full string }{
		{"!az~", "rk:{!az~}"},
		{" \x7f", "rk:{%20%7F}"},
		{"%{}", "rk:{%25%7B%7D}"},
		{"\x00\xff", "rk:{%00%FF}"},
		{"", "rk:{%}"},
		{"ns:!~", "rk:{!~}:ns"},
		{"n s:", "rk:{%}:n%20s"},
		{":x", "rk:{x}:%"},
		{strings.Repeat("k", 300), "rk:{" + strings.Repeat("k", 300) + "}"},
	} {
		full, tag := s.redisKey(tc.key, si)
		want := tc.full + si.suffix
		if !strings.EqualFold(full, want) {
			t.Errorf("redisKey(%q) = %q, want %q", tc.key, full, want)
		}
		if wantTag := tc.full[len("rk:{"):strings.IndexByte(tc.full, '}')]; !strings.EqualFold(tag, wantTag) {
			t.Errorf("redisKey(%q) tag = %q, want %q", tc.key, tag, wantTag)
		}
	}
}

// TestKeysSpecFields: <spec> spells every field of the Spec in decimal, in
// the order keys.go states (the kind's letters, Limit, Window in ns,
// Burst, Buckets, MaxDelay in ns). The state of deployed stores lives
// under these keys: spelled any other way, an upgraded store would find
// none of it, every client starting over with a full allowance.
func TestKeysSpecFields(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: 1500 * time.Millisecond, Burst: 21, Buckets: 13, MaxDelay: 17 * time.Millisecond}
	suffix := newSpecInfo(spec).suffix
	kind, fields, ok := strings.Cut(strings.TrimPrefix(suffix, ":"), ":")
	if !ok || kind == "" || strings.Trim(kind, "abcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("spec part %q does not start with the kind's letters", suffix)
	}
	if want := "10:1500000000:21:13:17000000"; fields != want {
		t.Fatalf("spec part %q spells the fields %q, want %q", suffix, fields, want)
	}
}

// TestSpecCacheBounded: the spec cache remembers the infos of the first
// maxSpecs specs it is asked for and no more (a direct user of the Store
// may pass any number of distinct specs); past the bound infos are still
// derived, each call.
func TestSpecCacheBounded(t *testing.T) {
	var c specCache
	for i := range maxSpecs + 100 {
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: int64(i + 1), Window: time.Second}
		if si := c.get(spec, 0); si.capacity != spec.Limit {
			t.Fatalf("get(Limit %d) has capacity %d", spec.Limit, si.capacity)
		}
	}
	held := 0
	c.m.Range(func(any, any) bool { held++; return true })
	if held != maxSpecs {
		t.Fatalf("after %d distinct specs the cache holds %d, want %d", maxSpecs+100, held, maxSpecs)
	}
}

// TestSpecCacheJudgedBounded: the infos of checks judged at a limit of
// their own (algorithms.Check.Limit), below their Spec's or above it,
// are cached apart, each with the judged limit as L and capacity and the
// Spec's limit as C and in its keys, at most maxSpecs of them, started
// again when more come (an adaptive limit that keeps moving): the last
// one is cached, and the Specs' own infos stay.
func TestSpecCacheJudgedBounded(t *testing.T) {
	var c specCache
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5000, Window: time.Second}
	own := c.get(spec, 0)
	if c.get(spec, spec.Limit) != own {
		t.Fatal("a check judged at Spec.Limit got another info than one at 0")
	}
	for i := range 3*maxSpecs + 100 {
		limit := int64(i + 1) // below spec.Limit, then above it
		if limit == spec.Limit {
			continue
		}
		si := c.get(spec, limit)
		if si.capacity != limit || si.args[1] != limit || si.args[3] != spec.Limit || si.suffix != own.suffix {
			t.Fatalf("get(Limit %d) = capacity %d, args %v, suffix %q; want capacity and L %d, C %d, the Spec's suffix %q",
				limit, si.capacity, si.args, si.suffix, limit, spec.Limit, own.suffix)
		}
		if c.get(spec, limit) != si {
			t.Fatalf("get(Limit %d) again: not the info just cached", limit)
		}
		if i%257 != 0 && i+1 != maxSpecs && i != maxSpecs {
			continue
		}
		held := 0
		c.judged.Range(func(any, any) bool { held++; return true })
		if held > maxSpecs {
			t.Fatalf("after %d judged limits the cache holds %d, more than %d", i+1, held, maxSpecs)
		}
	}
	if c.get(spec, 0) != own {
		t.Fatal("the Spec's own info was dropped with the judged ones")
	}
}

// TestSpecCacheRepeatsSkipTheMap: a Spec the cache holds is answered
// without a lookup in its sync.Map, whose hash of an interface key walks
// the Spec's fields by reflection (callgrind: about 550 of a one-check
// Take's 17,600 client instructions): here the map forgets each Spec after
// its first call, and every later call still gets the first call's info.
func TestSpecCacheRepeatsSkipTheMap(t *testing.T) {
	var c specCache
	checks := allocChecks(4)
	first := make([]*specInfo, len(checks))
	for i, ch := range checks {
		first[i] = c.get(ch.Spec, 0)
		c.m.Delete(ch.Spec)
	}
	for range 3 {
		for i, ch := range checks {
			if got := c.get(ch.Spec, 0); got != first[i] {
				t.Fatalf("get(%+v) again: info %p, want the first call's %p (looked up in the map, derived anew)", ch.Spec, got, first[i])
			}
		}
	}
}

// TestSpecCacheSharedSlot: Specs whose slot of the front table is the
// same each get their own info, the first one from the slot and the others
// from the map, and none replaces another there.
func TestSpecCacheSharedSlot(t *testing.T) {
	var c specCache
	base := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}
	specs := []algorithms.Spec{base}
	for l := int64(2); len(specs) < 3; l++ {
		s := base
		s.Limit = l
		if frontSlot(s) == frontSlot(base) {
			specs = append(specs, s)
		}
	}
	for range 2 {
		for _, s := range specs {
			if si := c.get(s, 0); si.capacity != s.Limit || si.args[1] != s.Limit {
				t.Fatalf("get(Limit %d) = capacity %d, L %v: another Spec's info", s.Limit, si.capacity, si.args[1])
			}
		}
	}
	if e := c.front[frontSlot(base)].Load(); e == nil || e.spec != base {
		t.Fatalf("the shared slot holds %+v, want the first Spec %+v", e, base)
	}
}
