package outfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteDanglingLinkInLinkedDirectory: --svg naming a symlink, yet to
// point at a file, in a directory reached through another symlink
// writes the file the system resolves the link to: its relative target
// ("../charts/today.svg") is taken from the directory the link is in,
// not from the name of the symlink to that directory, as a shell's
// redirection writes it.
func TestWriteDanglingLinkInLinkedDirectory(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"real/sub", "real/charts", "charts"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(root, "dirlink")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink(filepath.Join("..", "charts", "today.svg"), filepath.Join(root, "real", "sub", "today.svg")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "dirlink", "today.svg")
	o, err := New("--svg", path)
	if err == nil {
		err = o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err })
	}
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "real", "charts", "today.svg")); string(b) != "<svg/>" {
		t.Errorf("real/charts/today.svg, where the link leads, holds %q (err %v), want <svg/>", b, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "charts", "today.svg")); err == nil {
		t.Errorf("charts/today.svg written, a file the link does not lead to")
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a symlink (err %v)", err)
	}
}
