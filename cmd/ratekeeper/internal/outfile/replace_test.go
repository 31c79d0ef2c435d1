//go:build unix

package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests below that need a process of their own (one that is
// interrupted, or runs as another user) run this test binary again, with
// childEnv naming the case, dirEnv its directory and, for an interrupted
// one, sigEnv the number of the signal.
const (
	childEnv = "OUTFILE_TEST_CHILD"
	dirEnv   = "OUTFILE_TEST_DIR"
	sigEnv   = "OUTFILE_TEST_SIGNAL"
)

// childSignal returns the signal sigEnv names (SIGINT when none does).
func childSignal() syscall.Signal {
	if n, err := strconv.Atoi(os.Getenv(sigEnv)); err == nil {
		return syscall.Signal(n)
	}
	return syscall.SIGINT
}

// eachEndingSignal runs f as a subtest for each of endingSignals that
// this process does not ignore. An ignored one is ignored by the child
// too (it inherits that), and stays ignored there, as Write leaves it: a
// test binary run from a script in the background (sh's "cmd &", which
// ignores SIGINT) cannot be interrupted by it.
func eachEndingSignal(t *testing.T, f func(t *testing.T, sig syscall.Signal)) {
	for _, s := range endingSignals {
		sig := s.(syscall.Signal)
		t.Run(sig.String(), func(t *testing.T) {
			if signal.Ignored(sig) {
				t.Skipf("%v is ignored by this process, and so by its child", sig)
			}
			f(t, sig)
		})
	}
}

// TestMain runs a child's case instead of the tests when childEnv is set.
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "interrupted":
		childInterrupted(os.Getenv(dirEnv))
	case "readonly":
		childReadOnly(os.Getenv(dirEnv))
	case "hold":
		childHold(os.Getenv(dirEnv))
	case "fileonly":
		childFileOnly(os.Getenv(dirEnv))
	default:
		if c := systemChildren[os.Getenv(childEnv)]; c != nil {
			c(os.Getenv(dirEnv))
		}
		os.Stderr.WriteString("unknown child case\n")
		os.Exit(3)
	}
}

// systemChildren holds the child cases of one system's tests, by name;
// each ends the process.
var systemChildren = map[string]func(dir string){}

// child runs this test binary as the child case name on dir, with cred
// for a process of another user (nil: this one's), bounded by 30s of
// running time; it returns the child's state and its standard error.
func child(t *testing.T, name, dir string, cred *syscall.Credential, env ...string) (*os.ProcessState, string) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		// A binary the other user may run (the build directory is
		// its builder's only), beside dir, not in it.
		bin2 := filepath.Join(filepath.Dir(dir), "outfile.test")
		copyFile(t, bin, bin2, 0o755)
		bin = bin2
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), childEnv+"="+name, dirEnv+"="+dir)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() }) // a failure bound
	go func() { cmd.Wait(); close(done) }()
	<-done
	if !timer.Stop() {
		t.Fatalf("child %s killed after 30s; stderr:\n%s", name, stderr.String())
	}
	return cmd.ProcessState, stderr.String()
}

// skipUnlessOthersReach skips a test whose child runs as another user
// when a directory above dir (those the test does not make open) is not
// open to other users: the child could neither run its binary nor reach
// dir (root's TMPDIR in /root, mode 0700). It failed so, as root:
// "fork/exec /root/tmp/TestRefusesReadOnlyFile.../outfile.test: permission
// denied".
func skipUnlessOthersReach(t *testing.T, dir string) {
	t.Helper()
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is not open to other users (mode %v): a child of another user cannot reach the test's directory; set TMPDIR to one that is", d, fi.Mode().Perm())
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

func copyFile(t *testing.T, from, to string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, perm); err != nil {
		t.Fatal(err)
	}
}

// TestWriteInterruptedLeavesOldFile: a command interrupted (Ctrl-C,
// SIGTERM, SIGHUP) while it writes an output leaves the file as it was
// and nothing beside it, and still ends by the signal. The temporary file
// the output was being written to was left beside the target
// (".out.svg.1x2y3z"), at each interrupted run.
func TestWriteInterruptedLeavesOldFile(t *testing.T) {
	eachEndingSignal(t, func(t *testing.T, sig syscall.Signal) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.svg")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, stderr := child(t, "interrupted", dir, nil, sigEnv+"="+strconv.Itoa(int(sig)))
		ws, _ := st.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("the interrupted child ended with %v, want killed by %v; stderr:\n%s", st, sig, stderr)
		}
		if b, err := os.ReadFile(path); string(b) != "old" {
			t.Errorf("after the interrupted Write the target holds %q (err %v), want it as it was", b, err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "out.svg" {
				t.Errorf("%s left beside the target by the interrupted Write", e.Name())
			}
		}
	})
}

// childInterrupted writes half an output to dir/out.svg, sends its own
// process the signal sigEnv names and waits to be ended by it.
func childInterrupted(dir string) {
	o, err := New("--svg", filepath.Join(dir, "out.svg"))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	err = o.Write(func(w io.Writer) error {
		io.WriteString(w, "<svg>half")
		syscall.Kill(os.Getpid(), childSignal())
		time.Sleep(20 * time.Second) // a failure bound: the signal ends the process first
		return errors.New("not ended by the interrupt")
	})
	os.Stderr.WriteString("Write returned: " + errString(err) + "\n")
	os.Exit(4)
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestRefusesReadOnlyFile: an output that names a file its user may not
// write is refused, with an error naming the flag, the path and the
// reason, and the file is left as it was, even in a directory the user
// may write (where renaming over it is allowed). It was replaced, as by
// "mv -f", where a shell's redirection, cp or an editor refuses.
func TestRefusesReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// Root may write any file: the case runs as nobody.
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		skipUnlessOthersReach(t, filepath.Dir(dir))
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "readonly.svg"), []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	// The child's own, writable, made read-only by the child after New.
	later := filepath.Join(dir, "later.svg")
	if err := os.WriteFile(later, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		if err := os.Chown(later, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	st, stderr := child(t, "readonly", dir, cred)
	if !st.Success() {
		t.Errorf("%s", stderr)
	}
}

// childReadOnly runs the case of TestRefusesReadOnlyFile, as a user who
// may not write dir/readonly.svg or dir/later.svg, and exits 1 when it
// fails, saying why.
func childReadOnly(dir string) {
	failed := false
	fail := func(msg string) { os.Stderr.WriteString(msg + "\n"); failed = true }
	path := filepath.Join(dir, "readonly.svg")
	if _, err := New("--svg", path); err == nil {
		fail("New(" + path + ") = nil error, want it refused")
	} else if !strings.HasPrefix(err.Error(), "--svg "+path+": ") || !errors.Is(err, fs.ErrPermission) {
		fail("New(" + path + ") = " + err.Error() + ", want --svg " + path + ": and a permission error")
	}
	// Made read-only after New: refused at Write.
	later := filepath.Join(dir, "later.svg")
	o, err := New("--svg", later)
	if err != nil {
		fail("New(" + later + ") = " + err.Error())
	} else {
		if err := os.Chmod(later, 0o444); err != nil {
			fail(err.Error())
		}
		err := o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
		if err == nil || !errors.Is(err, fs.ErrPermission) {
			fail("Write to a file made read-only = " + errString(err) + ", want a permission error")
		}
	}
	for _, p := range []string{path, later} {
		if b, err := os.ReadFile(p); string(b) != "old" {
			fail(p + " holds " + string(b) + " (" + errString(err) + "), want it as it was")
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		fail("files left in the directory")
	}
	if failed {
		os.Exit(1)
	}
	os.Exit(0)
}

// TestWriteKeepsHardLinks: an output that names a file with other hard
// links writes the file they share, as a shell's redirection does: every
// name shows the new output. Renaming a new file over it left the other
// names with the old one, in silence.
func TestWriteKeepsHardLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.svg")
	other := filepath.Join(dir, "published.svg")
	if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, other); err != nil {
		t.Skipf("link: %v", err)
	}
	o, err := New("--svg", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, other} {
		if b, _ := os.ReadFile(p); string(b) != "<svg/>" {
			t.Errorf("%s holds %q after Write, want <svg/>", filepath.Base(p), b)
		}
	}
	a, _ := os.Stat(path)
	b, _ := os.Stat(other)
	if !os.SameFile(a, b) {
		t.Errorf("%s and %s are no longer one file", path, other)
	}
	if a != nil && a.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after Write, want 0640 as it was", a.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the directory after Write, want 2", len(ents))
	}
}

// TestWriteKeepsOwner: an output written over a file of another user (in
// a directory both may write; here by root) keeps its owner and group,
// as a shell's redirection does. The file renamed over it was the
// writer's.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a file to another user")
	}
	path := filepath.Join(t.TempDir(), "out.svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	o, err := New("--svg", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d after Write, want 65534:65534 as it was", st.Uid, st.Gid)
	}
	if b, _ := os.ReadFile(path); string(b) != "<svg/>" {
		t.Errorf("the file holds %q after Write, want <svg/>", b)
	}
}

// TestInterruptWaitsForCopyInPlace: an interrupt (or SIGTERM, SIGHUP)
// while an output is copied in place (a file with other hard links)
// waits for the copy to end, then ends the command by that signal: the
// file is never left half written by Ctrl-C.
func TestInterruptWaitsForCopyInPlace(t *testing.T) {
	eachEndingSignal(t, func(t *testing.T, sig syscall.Signal) {
		dir := t.TempDir()
		st, stderr := child(t, "hold", dir, nil, sigEnv+"="+strconv.Itoa(int(sig)))
		ws, _ := st.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("the child ended with %v, want killed by %v once the copy was done; stderr:\n%s", st, sig, stderr)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "copied")); string(b) != "whole" {
			t.Errorf("the copy, interrupted, wrote %q (err %v), want it whole; stderr:\n%s", b, err, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "tmp")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the temporary file is left after the interrupt (err %v)", err)
		}
	})
}

// childHold runs a copy under writeGuard.hold that sends its own process
// the signal sigEnv names, waits until the guard has the signal, then
// writes dir/copied in two parts; it should be ended after hold returns,
// not before.
func childHold(dir string) {
	tmp := filepath.Join(dir, "tmp")
	os.WriteFile(tmp, nil, 0o600)
	g := guard(tmp)
	g.hold(func() error {
		syscall.Kill(os.Getpid(), childSignal())
		for start := time.Now(); ; { // a failure bound: the guard takes the signal at once
			g.mu.Lock()
			got := g.held != nil
			g.mu.Unlock()
			if got {
				break
			}
			if time.Since(start) > 10*time.Second {
				os.Stderr.WriteString("the guard never held the signal\n")
				os.Exit(3)
			}
			runtime.Gosched()
		}
		f, err := os.Create(filepath.Join(dir, "copied"))
		if err != nil {
			return err
		}
		f.WriteString("wh")
		f.WriteString("ole")
		return f.Close()
	})
	os.Stderr.WriteString("hold returned without ending the process\n")
	os.Exit(4)
}

// TestWritesFileInDirectoryNotWritable: an output that names a file its
// user may write, in a directory the user may not (a chart published in a
// web server's directory, the file given to the user), is written in
// place, as a shell's redirection writes it. It was refused ("permission
// denied"): no temporary file can be made beside it.
func TestWritesFileInDirectoryNotWritable(t *testing.T) {
	root := t.TempDir()
	var cred *syscall.Credential
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		// Root may write in any directory: the case runs as nobody.
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		skipUnlessOthersReach(t, filepath.Dir(root))
		uid, gid = 65534, 65534
		for _, d := range []string{filepath.Dir(root), root} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	pub := filepath.Join(root, "pub")
	if err := os.Mkdir(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(pub, "chart.svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	if cred == nil {
		if err := os.Chmod(pub, 0o555); err != nil { // not writable by its owner
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(pub, 0o755) })
	}
	before, _ := os.Stat(path)
	st, stderr := child(t, "fileonly", pub, cred)
	if !st.Success() {
		t.Errorf("%s", stderr)
	}
	if b, err := os.ReadFile(path); string(b) != "<svg/>" {
		t.Errorf("the file holds %q (err %v), want <svg/>", b, err)
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Errorf("the file is no longer the one it was (err %v)", err)
	}
	if ents, _ := os.ReadDir(pub); len(ents) != 1 {
		t.Errorf("%d files in the directory, want the one", len(ents))
	}
}

// childFileOnly writes <svg/> to dir/chart.svg, a file it may write in a
// directory it may not.
func childFileOnly(dir string) {
	o, err := New("--svg", filepath.Join(dir, "chart.svg"))
	if err == nil {
		err = o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err })
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}
