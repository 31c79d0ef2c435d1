package reload_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// settle fires the timer the next event set and waits for its reload,
// failing if the hook is called or a grace given.
func (fw *fakeWatch) settle(t *testing.T) {
	t.Helper()
	g := hangguard.New(wait)
	defer g.Stop()
	for {
		select {
		case e := <-fw.events:
			t.Fatalf("reported: %v", e.err)
		case d := <-fw.clock.resets:
			if d == fakeGrace {
				t.Fatal("the content reported already was given a grace")
			}
			if fw.clock.advance(d) {
				<-fw.ticks
				return
			}
		case <-g.C:
			if g.Expired() {
				t.Fatalf("no timer within %v", wait)
			}
		}
	}
}

// TestGraceAfterReportedFileSavedAgain: a broken file, reported, is saved
// again unchanged by truncate-then-write (the empty file is given a grace,
// then the same broken content is found, reported already), and much later
// fixed the same way. The empty file of the fix is given its own grace.
// Before, the first empty file's grace was left pending by the reload that
// found the reported content, and taken up by the second, whose time had
// run out: "the document is empty" was reported at once.
func TestGraceAfterReportedFileSavedAgain(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	broken := "policies:\n  - {name: p0, limit: -1, window: 1m}\n"
	if err := os.WriteFile(fw.path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err == nil {
		t.Fatal("the broken file was not reported after its grace")
	}
	// Saved again, unchanged, by truncate-then-write: the empty file is held...
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("empty reported at once: %v", e.err)
	}
	// ... then the same broken content: reported already, nothing said.
	if err := os.WriteFile(fw.path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	fw.settle(t)
	fw.clock.advance(10 * fakeGrace)
	// Much later, fixed by truncate-then-write: the empty file is transient.
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("empty reported at once, with no grace: %v", e.err)
	}
	if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("after the file was fixed: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}
}

// emptiedInGrace starts a fake watch of a file with a limit of 5, empties
// the file and drives the watch until the empty file is given its grace,
// failing if it is reported at once instead.
func emptiedInGrace(t *testing.T) *fakeWatch {
	t.Helper()
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, reported := fw.drive(t, untilGrace); reported {
		t.Fatal("the empty file was reported at once, want a grace")
	}
	return fw
}

// TestCloseDuringGrace: Close while a file that does not load is given its
// grace returns, leaves no goroutine and reports nothing.
func TestCloseDuringGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := emptiedInGrace(t)
	if err := fw.w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(fw.events) > 0 {
		t.Fatalf("reported on Close: %+v", <-fw.events)
	}
}

// TestReloadDuringGrace: an explicit Reload while a file that does not
// load is given its grace reports it at once, with a nil Config; the grace's
// timer then reports nothing again; the file fixed is applied.
func TestReloadDuringGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := emptiedInGrace(t)
	if err := fw.w.Reload(); err == nil {
		t.Fatal("Reload of the empty file = nil, want its error")
	}
	if e := <-fw.events; e.err == nil || e.cfg != nil {
		t.Fatalf("Reload reported %+v, want a nil Config and the error", e)
	}
	// the grace timer fires: nothing more
	if !fw.clock.advance(fakeGrace) {
		t.Fatal("the grace's timer did not fire")
	}
	<-fw.ticks
	if len(fw.events) > 0 {
		t.Fatalf("reported twice: %+v", <-fw.events)
	}
	if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || e.cfg == nil || fw.limit.Load() != 7 {
		t.Fatalf("after the file was fixed: %+v, limit %d, want 7 applied", e, fw.limit.Load())
	}
}

// TestGraceRestartsWhenMissingFileIsMadeEmpty: a file removed, then made
// again empty half-way through its grace, has changed while it still does
// not load (it is being written): its grace starts again in full, as the
// missing file and the empty one are not the same failure.
func TestGraceRestartsWhenMissingFileIsMadeEmpty(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	if err := os.Remove(fw.path); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("the missing file was reported at once: %v", e.err)
	}
	if fw.clock.advance(fakeGrace / 2) {
		t.Fatal("the grace ran out half-way")
	}
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var left time.Duration
	if e, reported := fw.drive(t, func(d time.Duration) bool { left = d; return d != fakeDebounce }); reported {
		t.Fatalf("the empty file was reported at once: %v", e.err)
	}
	if left != fakeGrace {
		t.Errorf("the empty file made where the missing one was is read again in %v, want a full grace of %v", left, fakeGrace)
	}
}
