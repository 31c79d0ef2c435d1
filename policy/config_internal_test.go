package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigSizeBound: a configuration of maxConfigSize bytes is
// read; one byte more is refused, before it is parsed.
func TestParseConfigSizeBound(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	pad := func(n int) []byte { return []byte(doc + "#" + strings.Repeat("x", n-len(doc)-2) + "\n") }
	if data := pad(maxConfigSize); len(data) != maxConfigSize {
		t.Fatalf("padded to %d bytes, want %d", len(data), maxConfigSize)
	}
	if _, err := ParseConfig(pad(maxConfigSize), "c.yaml"); err != nil {
		t.Errorf("ParseConfig of %d bytes = %v, want it read", maxConfigSize, err)
	}
	_, err := ParseConfig(pad(maxConfigSize+1), "c.yaml")
	if ces := ConfigErrors(err); len(ces) != 1 || !strings.Contains(ces[0].Reason, "larger than") {
		t.Errorf("ParseConfig of %d bytes = %v, want it refused as too large", maxConfigSize+1, err)
	}
}

// TestLoadSizeBound: Load reads a file of maxConfigSize bytes, and refuses
// one a byte longer as too large, never a config cut short at the bound.
func TestLoadSizeBound(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	dir := t.TempDir()
	for _, n := range []int{maxConfigSize, maxConfigSize + 1} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(doc+"#"+strings.Repeat("x", n-len(doc)-2)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if n == maxConfigSize && err != nil {
			t.Errorf("Load of %d bytes = %v, want it read", n, err)
		}
		if ces := ConfigErrors(err); n > maxConfigSize && (len(ces) != 1 || !strings.Contains(ces[0].Reason, "larger than")) {
			t.Errorf("Load of %d bytes = %v, want it refused as too large", n, err)
		}
	}
}
