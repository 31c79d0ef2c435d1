package outfile

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func init() {
	systemChildren["bindmount"] = func(dir string) { childBindMount(dir, false) }
	systemChildren["bindmount-nobody"] = func(dir string) { childBindMount(dir, true) }
}

// TestWritesBindMountedFile: an output that names a file bind-mounted
// over another (a container's single-file volume: docker run -v
// $PWD/chart.svg:/out/chart.svg) is written, into the file mounted, as
// a shell's redirection writes it. A rename over a mount point fails
// ("device or resource busy"), and the output was refused.
func TestWritesBindMountedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "host.svg"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out", "chart.svg"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, stderr := child(t, "bindmount", dir, nil)
	if st.ExitCode() == 5 {
		t.Skipf("cannot bind mount here: %s", stderr)
	}
	if !st.Success() {
		t.Errorf("%s", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "host.svg")); string(b) != "<svg/>" {
		t.Errorf("the file mounted holds %q (err %v), want <svg/>", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "out")); len(ents) != 1 {
		t.Errorf("%d files in the directory of the mount point, want the one", len(ents))
	}
}

// TestWritesBindMountedFileWriteOnly: a bind-mounted output file that
// its user (not root) may write and not read (mode 0200) is written, as a
// shell's redirection writes it. The copy into the mounted file reopened
// the temporary file, made with the target's mode, by its name, and was
// refused.
func TestWritesBindMountedFileWriteOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount")
	}
	dir := t.TempDir()
	skipUnlessOthersReach(t, filepath.Dir(dir))
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host, out := filepath.Join(dir, "host.svg"), filepath.Join(dir, "out")
	if err := os.WriteFile(host, []byte("old"), 0o200); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "chart.svg"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{host, out} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	st, stderr := child(t, "bindmount-nobody", dir, nil)
	if st.ExitCode() == 5 {
		t.Skipf("cannot bind mount, or become nobody, here: %s", stderr)
	}
	if !st.Success() {
		t.Errorf("%s", stderr)
	}
	if b, err := os.ReadFile(host); string(b) != "<svg/>" {
		t.Errorf("the file mounted holds %q (err %v), want <svg/>", b, err)
	}
	if fi, err := os.Stat(host); err != nil || fi.Mode().Perm() != 0o200 {
		t.Errorf("the file mounted: %v (err %v), want mode 0200 as it was", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("%d files in the directory of the mount point, want the one", len(ents))
	}
}

// childBindMount, in a mount namespace of its own (the mount goes with
// the process, whatever ends it), mounts dir/host.svg on
// dir/out/chart.svg and writes <svg/> to the latter, as nobody when
// nobody is true; it exits 5 when it may not make the namespace, mount
// or become nobody.
func childBindMount(dir string, nobody bool) {
	// The namespace is the thread's: this goroutine stays on it.
	runtime.LockOSThread()
	host, point := filepath.Join(dir, "host.svg"), filepath.Join(dir, "out", "chart.svg")
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"unshare", func() error { return syscall.Unshare(syscall.CLONE_NEWNS) }},
		{"make / private", func() error { return syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "") }},
		{"mount", func() error { return syscall.Mount(host, point, "", syscall.MS_BIND, "") }},
		{"become nobody", func() error {
			if !nobody {
				return nil
			}
			if err := syscall.Setgroups(nil); err != nil {
				return err
			}
			if err := syscall.Setgid(65534); err != nil {
				return err
			}
			return syscall.Setuid(65534)
		}},
	} {
		if err := step.do(); err != nil {
			os.Stderr.WriteString(step.what + ": " + err.Error() + "\n")
			os.Exit(5)
		}
	}
	o, err := New("--svg", point)
	if err == nil {
		err = o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err })
	}
	if err != nil {
		os.Stderr.WriteString(strings.ReplaceAll(err.Error(), dir, "DIR") + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}
