package reload_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestNewReportsEveryOption: New stopped at the first refused option, and
// a nil one said "nil Option" without saying which. Every refused option
// is reported, one per line, a nil one by its index; one alone is the
// option's own error.
func TestNewReportsEveryOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "limits.yaml")
	apply := func(*policy.Config) error { return nil }
	_, err := reload.New(path, apply, reload.WithDebounce(0), nil, reload.WithGrace(-1))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"reload: WithDebounce: duration must be positive", "reload: Options hold a nil Option at index 1", "reload: WithGrace: duration must be positive"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("New: %q, want %q", lines, want)
	}
	if _, err := reload.New(path, apply, nil); err == nil || err.Error() != "reload: Options hold a nil Option at index 0" {
		t.Errorf("New(path, apply, nil) = %v, want the nil option at index 0 alone", err)
	}
}
