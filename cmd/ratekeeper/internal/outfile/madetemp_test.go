//go:build unix

package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func init() { systemChildren["tempmade"] = childTempMade }

// stepEnv names the call whose temporary file the child of
// TestSignalAsTempIsMadeLeavesNothing is signalled at.
const stepEnv = "OUTFILE_TEST_STEP"

// TestSignalAsTempIsMadeLeavesNothing: a signal (Ctrl-C, SIGTERM, SIGHUP)
// that comes the moment a temporary file is made (by New's check, by
// NewTemp's, by Write for New and for NewTemp) leaves no file behind, the
// target as it was, and ends the command by that signal. The guard
// started only after the file was made: a signal in between ended the
// command by its default action, and the file (".out.svg.xxxx",
// "ratekeeper-demo-xxxx.svg") was left.
func TestSignalAsTempIsMadeLeavesNothing(t *testing.T) {
	for _, step := range []string{"New", "NewTemp", "Write", "WriteNewTemp"} {
		t.Run(step, func(t *testing.T) {
			eachEndingSignal(t, func(t *testing.T, sig syscall.Signal) {
				dir := t.TempDir()
				path := filepath.Join(dir, "out.svg")
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
				st, stderr := child(t, "tempmade", dir, nil, sigEnv+"="+strconv.Itoa(int(sig)), stepEnv+"="+step, "TMPDIR="+dir)
				ws, _ := st.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != sig {
					t.Errorf("the child ended with %v, want killed by %v; stderr:\n%s", st, sig, stderr)
				}
				if b, err := os.ReadFile(path); string(b) != "old" {
					t.Errorf("the target holds %q (err %v), want it as it was", b, err)
				}
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					if e.Name() != "out.svg" {
						t.Errorf("%s left behind by the signal", e.Name())
					}
				}
			})
		})
	}
}

// childTempMade makes an output of dir/out.svg (New) or of a new file in
// dir, the temporary directory (NewTemp), and writes it, sending its own
// process the signal sigEnv names as soon as the temporary file of the
// step stepEnv names is made; it waits there to be ended by it.
func childTempMade(dir string) {
	step := os.Getenv(stepEnv)
	at := 1 // the check's temporary file, made by New or NewTemp
	if step == "Write" || step == "WriteNewTemp" {
		at = 2 // the one Write makes after it
	}
	made := 0
	tempMadeHook = func(name string) {
		if made++; made != at {
			return
		}
		syscall.Kill(os.Getpid(), childSignal())
		time.Sleep(20 * time.Second) // a failure bound: the signal ends the process first
		os.Stderr.WriteString("not ended by the signal\n")
		os.Exit(4)
	}
	var o *File
	var err error
	if step == "NewTemp" || step == "WriteNewTemp" {
		o, err = NewTemp("ratekeeper-demo-*.svg")
	} else {
		o, err = New("--svg", filepath.Join(dir, "out.svg"))
	}
	if err == nil {
		err = o.Write(func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err })
	}
	os.Stderr.WriteString("the signal never came; error: " + errString(err) + "\n")
	os.Exit(3)
}
