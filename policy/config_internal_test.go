package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigSizeBound: a configuration of MaxConfigSize bytes is
// read; one byte more is refused, before it is parsed.
func TestParseConfigSizeBound(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	pad := func(n int) []byte { return []byte(doc + "#" + strings.Repeat("x", n-len(doc)-2) + "\n") }
	if data := pad(MaxConfigSize); len(data) != MaxConfigSize {
		t.Fatalf("padded to %d bytes, want %d", len(data), MaxConfigSize)
	}
	if _, err := ParseConfig(pad(MaxConfigSize), "c.yaml"); err != nil {
		t.Errorf("ParseConfig of %d bytes = %v, want it read", MaxConfigSize, err)
	}
	_, err := ParseConfig(pad(MaxConfigSize+1), "c.yaml")
	if ces := ConfigErrors(err); len(ces) != 1 || !strings.Contains(ces[0].Reason, "larger than") {
		t.Errorf("ParseConfig of %d bytes = %v, want it refused as too large", MaxConfigSize+1, err)
	}
}

// TestLoadSizeBound: Load reads a file of MaxConfigSize bytes, and refuses
// one a byte longer as too large, never a config cut short at the bound.
func TestLoadSizeBound(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m}\n"
	dir := t.TempDir()
	for _, n := range []int{MaxConfigSize, MaxConfigSize + 1} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(doc+"#"+strings.Repeat("x", n-len(doc)-2)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if n == MaxConfigSize && err != nil {
			t.Errorf("Load of %d bytes = %v, want it read", n, err)
		}
		if ces := ConfigErrors(err); n > MaxConfigSize && (len(ces) != 1 || !strings.Contains(ces[0].Reason, "larger than")) {
			t.Errorf("Load of %d bytes = %v, want it refused as too large", n, err)
		}
	}
}
