// Command chi is a small server showing ratekeeper under the chi router:
// global limits per client IP for every route, and the stricter
// write-endpoint preset for login, register and comments, keyed by client IP
// plus user. The router is built by package chiapp, beside this file.
//
//	go run ./examples/chi -addr 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/
//	for i in 1 2 3 4 5 6; do curl -si -d username=ann http://127.0.0.1:8080/login | head -1; done
//
// Behind reverse proxies, name them with -trusted-proxies (addresses or
// networks, comma-separated): the client is then the address their
// X-Forwarded-For names. Tried on one machine, with loopback as the proxy:
//
//	go run ./examples/chi -trusted-proxies 127.0.0.1
//	curl -si -H 'X-Forwarded-For: 203.0.113.7' http://127.0.0.1:8080/ | grep -i '^ratelimit:'
//	curl -si -H 'X-Forwarded-For: 198.51.100.9' http://127.0.0.1:8080/ | grep -i '^ratelimit:'
//
// The second client's count starts afresh: r=9 per second, as the first's.
// A request from the proxy itself without the header (a plain curl here, a
// load balancer's health check) names no client, and is answered 400.
//
// A rule on a route the router lacks (a typo, "POST /logn") stops it at
// start, the error naming the route: chiapp checks its rules' routes
// against the router's (middleware.Middleware.CheckRoutes).
//
// Ctrl-C (SIGINT) or SIGTERM stops it, once the requests in flight are
// answered. The handler (app.Hello), the form's user name (app.FormValue)
// and the Basic-auth stand-in for sign-in (app.SignedIn), used by chiapp,
// the error hook (app.LogError), the -trusted-proxies flag
// (app.ProxiesFlag), the check that no argument follows the flags
// (app.NoArgs), listening and serving (app.Listen, app.Serve) are helpers
// of examples/internal/app, which another module cannot import: copy them
// with the example and chiapp.
package main

import (
	"context"
	"flag"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/chi/chiapp"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/middleware"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	proxies := app.ProxiesFlag("trusted-proxies")
	flag.Parse()
	app.NoArgs("-addr 127.0.0.1:8081")
	// Ctrl-C (SIGINT) or SIGTERM stops the server, once the requests in
	// flight are answered.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *proxies); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// run serves on addr, to clients behind proxies (none: clients that
// connect directly), until ctx is done.
func run(ctx context.Context, addr string, proxies []netip.Prefix) error {
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
	if err != nil {
		return err
	}
	defer store.Close()
	h, err := chiapp.NewHandler(store, proxies, middleware.WithErrorHandler(app.LogError))
	if err != nil {
		return err
	}
	ln, err := app.Listen(addr, "-addr")
	if err != nil {
		return err
	}
	log.Printf("listening on http://%s", ln.Addr())
	return app.Serve(ctx, ln, h)
}
