package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFailingLeavesTarget: an output whose writing fails part way
// leaves the target as it was (or none), and nothing beside it; one that
// succeeds replaces it whole.
func TestWriteFailingLeavesTarget(t *testing.T) {
	broken := errors.New("chart failed")
	for _, exists := range []bool{true, false} {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.svg")
		if exists {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		o, err := New("--svg", path)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Write(func(w io.Writer) error {
			io.WriteString(w, "<svg>half")
			return broken
		})
		if !errors.Is(err, broken) {
			t.Errorf("Write = %v, want the writer's error", err)
		}
		b, err := os.ReadFile(path)
		if exists && string(b) != "old" || !exists && !os.IsNotExist(err) {
			t.Errorf("existing %v: after a failed Write the target holds %q (err %v)", exists, b, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != map[bool]int{true: 1, false: 0}[exists] {
			t.Errorf("existing %v: %d files in the directory after a failed Write", exists, len(ents))
		}
		if err := o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err }); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "<svg/>" {
			t.Errorf("existing %v: after Write the target holds %q, want <svg/>", exists, b)
		}
	}
}

// TestNewErrorsNameFlag: a path that cannot be written fails in New, with
// an error naming the flag and the path.
func TestNewErrorsNameFlag(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{dir, filepath.Join(dir, "no-such-dir", "x.svg")} {
		_, err := New("--svg", bad)
		if err == nil || !strings.HasPrefix(err.Error(), "--svg "+bad+": ") {
			t.Errorf("New(%s) = %v, want an error starting --svg %s: ", bad, err, bad)
		}
	}
}
