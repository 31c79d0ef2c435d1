package reload_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestWriteThroughAnotherName: the file written in place through another
// name of it (a hard link here; the host's name of a file bind-mounted into
// a container, as docker run -v ./rk.yaml:/etc/rk/rk.yaml gives, alike) is
// applied. inotify tells a write to the directory the writer named the
// file through, and to watches of the file itself: the Watcher, which
// watched only directories, saw nothing, and the file's changes were
// never applied (but by an explicit Reload). After the file is replaced
// by another (renamed over it), a write through a name of the new one is
// seen too.
func TestWriteThroughAnotherName(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, host := linkedConfig(t)
	fw := newFakeWatch(t, path, "")
	if err := os.WriteFile(host, []byte(config(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("written through another name: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}

	writeAtomic(t, path, config(8)) // another file, renamed over it
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 8 {
		t.Fatalf("renamed over: %v, limit %d, want 8 applied", e.err, fw.limit.Load())
	}
	host2 := filepath.Join(filepath.Dir(host), "rk2.yaml")
	if err := os.Link(path, host2); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host2, []byte(config(9)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 9 {
		t.Fatalf("the new file written through another name: %v, limit %d, want 9 applied", e.err, fw.limit.Load())
	}
}

// linkedConfig writes a config of limit 5 at path (etc/rk.yaml in a
// directory of the test's) and links it at host (host/rk.yaml), as a file
// bind-mounted into a container is one file under two names; it skips the
// test, saying why, where no hard link can be made.
func linkedConfig(t *testing.T) (path, host string) {
	t.Helper()
	base := t.TempDir()
	path = filepath.Join(base, "etc", "rk.yaml")
	host = filepath.Join(base, "host", "rk.yaml")
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(host)} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeAtomic(t, path, config(5))
	if err := os.Link(path, host); err != nil {
		t.Skipf("hard link: %v", err)
	}
	return path, host
}
