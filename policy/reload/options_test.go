package reload_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestNewOptionErrors: New refuses a nil Option, a nil OnReload hook and a
// debounce or grace that is not positive; the smallest positive ones are
// taken.
func TestNewOptionErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	writeAtomic(t, path, config(1))
	apply := func(*policy.Config) error { return nil }
	for _, tt := range []struct {
		name string
		opt  reload.Option
		ok   bool
	}{
		{"nil option", nil, false},
		{"nil hook", reload.OnReload(nil), false},
		{"zero debounce", reload.WithDebounce(0), false},
		{"negative debounce", reload.WithDebounce(-time.Second), false},
		{"nanosecond debounce", reload.WithDebounce(time.Nanosecond), true},
		{"zero grace", reload.WithGrace(0), false},
		{"negative grace", reload.WithGrace(-time.Second), false},
		{"nanosecond grace", reload.WithGrace(time.Nanosecond), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := reload.New(path, apply, reload.WithLogger(quiet), tt.opt)
			if w != nil {
				w.Close()
			}
			if (err == nil) != tt.ok {
				t.Errorf("New with %s: %v, want an error: %v", tt.name, err, !tt.ok)
			}
		})
	}
}
