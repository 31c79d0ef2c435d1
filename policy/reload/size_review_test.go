package reload_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestReloadRefusesAnOversizedFile pins what the Watcher's doc says of a
// file too large: it does not load, with the parser's error naming the
// limit (256 KiB), whatever its size past the 1 MiB the Watcher reads;
// nothing is applied and the rules in force stay. A file at the limit is
// read whole and loads.
func TestReloadRefusesAnOversizedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	valid := []byte("policies:\n  - {name: a, limit: 1, window: 1s}\n")
	if err := os.WriteFile(path, valid, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	// Reload alone reads the file: a debounce of an hour keeps the
	// Watcher's goroutine from reloading on the events of the writes
	// below, which on a loaded machine it did, reading a file half written
	// (a valid head of under 256 KiB) and applying it.
	w, err := reload.New(path, func(*policy.Config) error { applied++; return nil }, reload.InForce(cfg),
		reload.WithLogger(quiet), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	// A comment pads a valid file to size bytes.
	padded := func(size int) []byte {
		b := append([]byte(nil), valid...)
		b = append(b, '#')
		b = append(b, bytes.Repeat([]byte("x"), size-len(b))...)
		if len(b) != size {
			t.Fatalf("padded to %d bytes, want %d", len(b), size)
		}
		return b
	}
	for _, size := range []int{256<<10 + 1, 1 << 20, 1<<20 + 1, 3 << 20} {
		if err := os.WriteFile(path, padded(size), 0o644); err != nil {
			t.Fatal(err)
		}
		err := w.Reload()
		if !errors.Is(err, policy.ErrConfig) || !strings.Contains(err.Error(), "is larger than 262144 bytes") {
			t.Errorf("%d bytes: Reload = %v; want the parser's error naming the limit", size, err)
		}
		if applied != 0 || w.Config() != cfg {
			t.Errorf("%d bytes: applied %d times, Config %p; want none, the one in force", size, applied, w.Config())
		}
	}
	if err := os.WriteFile(path, padded(256<<10), 0o644); err != nil { // the largest accepted
		t.Fatal(err)
	}
	if err := w.Reload(); err != nil || applied != 1 {
		t.Errorf("256 KiB: Reload = %v, applied %d times; want it applied", err, applied)
	}
}
