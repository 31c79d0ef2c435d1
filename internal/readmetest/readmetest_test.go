package readmetest

import (
	"testing"
)

const readme = "# T\n\nIntro one:\n\n```yaml\na: 1\n```\n\nIntro two:\n\n```\nplain\n```\n\n```yaml\nb: 2\n```\n"

func TestBlockAfter(t *testing.T) {
	for _, c := range []struct{ intro, kind, want string }{
		{"Intro one", "yaml", "a: 1\n"},
		{"Intro two", "", "plain\n"},
		{"Intro two", "yaml", "b: 2\n"},
	} {
		if got := BlockAfter(t, readme, c.intro, c.kind); got != c.want {
			t.Errorf("BlockAfter(%q, %q) = %q, want %q", c.intro, c.kind, got, c.want)
		}
	}
}

// fatalRecorder records a Fatalf and ends its goroutine.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestBlockAfterFails(t *testing.T) {
	for _, c := range []struct{ intro, kind, want string }{
		{"Intro three", "yaml", "README.md has no paragraph starting %q"},
		{"Intro one", "go", "README.md has no %q block after %q"},
	} {
		f := &fatalRecorder{}
		func() {
			defer func() {
				if r := recover(); r != f {
					t.Errorf("%q %q: recovered %v, want the Fatalf", c.intro, c.kind, r)
				}
			}()
			BlockAfter(f, readme, c.intro, c.kind)
		}()
		if f.msg != c.want {
			t.Errorf("%q %q: failed with %q, want %q", c.intro, c.kind, f.msg, c.want)
		}
	}
}
