package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWriteLongName: an output whose file name is as long as the system
// takes (255 bytes on Linux, macOS and Windows file systems) is written,
// as a shell's redirection writes it.
func TestWriteLongName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("c", 251)+".svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Skipf("the file system takes no such name: %v", err)
	}
	o, err := New("--svg", path)
	if err == nil {
		err = o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err })
	}
	if err != nil {
		t.Fatalf("New and Write of a %d-byte file name: %v", len(filepath.Base(path)), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "<svg/>" {
		t.Errorf("the file holds %q after Write, want <svg/>", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory after Write, want 1", len(ents))
	}
}

// TestTempBaseKeepsCharacters: a long name is cut for the temporary
// file's at the start of a character, never inside one (macOS takes only
// UTF-8 names), and to no more than maxTempBase bytes.
func TestTempBaseKeepsCharacters(t *testing.T) {
	for _, base := range []string{
		"a" + strings.Repeat("€", 83) + ".svg", // byte maxTempBase inside a €
		strings.Repeat("é", 125) + ".svg",
		strings.Repeat("c", 251) + ".svg",
		"out.svg",
	} {
		got := tempBase(base)
		if len(got) > maxTempBase || !utf8.ValidString(got) || !strings.HasPrefix(base, got) {
			t.Errorf("tempBase(%d bytes) = %d bytes %q, want a prefix, whole characters, at most %d bytes", len(base), len(got), got, maxTempBase)
		}
		if len(base) <= maxTempBase && got != base {
			t.Errorf("tempBase(%q) = %q, want it whole", base, got)
		}
		if len(base) > maxTempBase && len(got) < maxTempBase-utf8.UTFMax {
			t.Errorf("tempBase(%d bytes) = %d bytes, want it cut at the last character that fits", len(base), len(got))
		}
	}
}
