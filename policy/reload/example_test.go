package reload_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// A reload naming a route the router does not have ("POST /logn" for
// "POST /login") is refused, as CheckRoutes refuses it at start: the
// login limit in force keeps running.
func ExampleWithCheck() {
	dir, _ := os.MkdirTemp("", "ratekeeper")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ratekeeper.yaml")
	os.WriteFile(path, []byte("policies:\n  - {name: login, limit: 5, window: 1m, routes: [\"POST /login\"]}\n"), 0o644)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(http.ResponseWriter, *http.Request) {})
	cfg, err := policy.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	m, _ := middleware.FromConfig(store, cfg, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
	fmt.Println(m.CheckRoutes(nil))
	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)),
		reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	os.WriteFile(path, []byte("policies:\n  - {name: login, limit: 5, window: 1m, routes: [\"POST /logn\"]}\n"), 0o644)
	err = w.Reload()
	fmt.Println(errors.Is(err, middleware.ErrUnknownRoute), m.Set().Policies()[0].Routes())
	// Output:
	// <nil>
	// true [POST /login]
}
