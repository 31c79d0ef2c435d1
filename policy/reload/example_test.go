package reload_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// A middleware follows its configuration file. Here Reload is called
// directly, as a SIGHUP handler would; the Watcher also reloads by itself
// when the file changes.
func Example() {
	dir, _ := os.MkdirTemp("", "ratekeeper")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ratekeeper.yaml")
	os.WriteFile(path, []byte("policies:\n  - {name: per-ip, limit: 100, window: 1m}\n"), 0o644)

	cfg, err := policy.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	m, _ := middleware.FromConfig(store, cfg)
	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	os.WriteFile(path, []byte("policies:\n  - {name: per-ip, limit: 50, window: 1m}\n"), 0o644)
	fmt.Println(w.Reload(), m.Set().PolicyHeader(1))

	os.WriteFile(path, []byte("policies:\n  - {name: per-ip, limit: 0, window: 1m}\n"), 0o644)
	fmt.Println(w.Reload() != nil, m.Set().PolicyHeader(1))
	// Output:
	// <nil> "per-ip";q=50;w=60
	// true "per-ip";q=50;w=60
}
