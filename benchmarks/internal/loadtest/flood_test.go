package loadtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFlood floods a bound of 10,000 keys with 100,000 client IPs (the full
// run: 1,000,000 into 100,000). It runs on a manual clock, so nothing in it
// depends on the machine's speed.
func TestFlood(t *testing.T) {
	cfg := FloodConfig{Keys: 100_000, MaxKeys: 10_000, Limit: 100, Window: 100 * time.Millisecond, Windows: 5}
	r, err := RunFlood(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v; %.1f B per key held", r, float64(r.HeapGrowth)/float64(r.Len))
	if r.FloodOK != cfg.Keys {
		t.Errorf("flood: %d of %d first requests admitted, want all", r.FloodOK, cfg.Keys)
	}
	if r.Len > r.Bound || r.Bound != keyBound(cfg.MaxKeys) {
		t.Errorf("store holds %d keys, bound %d (want %d, see TestFloodBoundIsTheStores)", r.Len, r.Bound, keyBound(cfg.MaxKeys))
	}
	if want := cfg.Windows * int(cfg.Limit); r.VictimSent != want || r.VictimRejected != 0 {
		t.Errorf("victim: %d of %d rejected (sent %d at exactly its limit)", r.VictimRejected, r.VictimSent, want)
	}
	if r.ProbesSent != cfg.Windows || r.ProbesAdmitted != 0 {
		t.Errorf("victim's over-limit probes: %d of %d admitted, want 0 of %d (its state was evicted)", r.ProbesAdmitted, r.ProbesSent, cfg.Windows)
	}
	// The documented budget is 70 bytes a key at the bound; a small bound
	// can sit at another point of the map's and slab's doubling, so allow a
	// third more, and 256 KiB for
	// whatever else the test binary keeps alive meanwhile. What matters is
	// that the heap follows the bound, not the 10x larger flood (which
	// would cost over 6 MB here).
	if limit := r.DocBound*4/3 + 256<<10; r.HeapGrowth > limit {
		t.Errorf("heap grew %d bytes for %d keys (%.1f B/key), more than %d (%d B/key and a third, plus 256 KiB)", r.HeapGrowth, r.Len, float64(r.HeapGrowth)/float64(r.Len), limit, BytesPerKey)
	}
}

func TestRunFloodConfigErrors(t *testing.T) {
	for _, cfg := range []FloodConfig{
		{Keys: 0, MaxKeys: 10, Limit: 10, Window: time.Second, Windows: 1},
		{Keys: 10, MaxKeys: 0, Limit: 10, Window: time.Second, Windows: 1},
		{Keys: 10, MaxKeys: 10, Limit: 0, Window: time.Second, Windows: 1},
		{Keys: 10, MaxKeys: 10, Limit: 10, Window: time.Second, Windows: 0},
		{Keys: 10, MaxKeys: 10, Limit: 7, Window: time.Millisecond, Windows: 1},
	} {
		if _, err := RunFlood(context.Background(), cfg); err == nil {
			t.Errorf("RunFlood(%+v): nil error", cfg)
		}
	}
}

// TestBytesPerKeyIsTheDocumented: the flood's report prints BytesPerKey as
// the MemoryStore's documented budget and judges the heap against it; it
// must be the figure the documentation gives, not one of its own.
func TestBytesPerKeyIsTheDocumented(t *testing.T) {
	src, err := os.ReadFile("../../../algorithms/memory.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", "")), " ")
	_, after, ok := strings.Cut(doc, "Budget ")
	if !ok {
		t.Fatal(`algorithms/memory.go no longer says "Budget N bytes per key"`)
	}
	n, _, ok := strings.Cut(after, " bytes per key")
	if !ok || n != strconv.Itoa(BytesPerKey) {
		t.Fatalf("algorithms/memory.go budgets %q bytes per key; BytesPerKey is %d", n, BytesPerKey)
	}
}
