// Command stdlib is a small server showing ratekeeper with the standard
// library's ServeMux: global limits per client IP around the whole mux, and
// the stricter write-endpoint preset wrapped around the login, register and
// comments handlers, keyed by client IP plus user.
//
//	go run ./examples/stdlib -addr 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/
//	for i in 1 2 3 4 5 6; do curl -si -d username=ann http://127.0.0.1:8080/login | head -1; done
//
// Behind reverse proxies, name them with -trusted-proxies (addresses or
// networks, comma-separated): the client is then the address their
// X-Forwarded-For names. Tried on one machine, with loopback as the proxy:
//
//	go run ./examples/stdlib -trusted-proxies 127.0.0.1
//	curl -si -H 'X-Forwarded-For: 203.0.113.7' http://127.0.0.1:8080/ | grep -i '^ratelimit:'
//	curl -si -H 'X-Forwarded-For: 198.51.100.9' http://127.0.0.1:8080/ | grep -i '^ratelimit:'
//
// The second client's count starts afresh: r=9 per second, as the first's.
// A request from the proxy itself without the header (a plain curl here, a
// load balancer's health check) names no client, and is answered 400.
//
// Ctrl-C (SIGINT) or SIGTERM stops it, once the requests in flight are
// answered. The handler (app.Hello), the form's user name (app.FormValue),
// the Basic-auth stand-in for sign-in (app.SignedIn), the error hook
// (app.LogError), the -trusted-proxies flag (app.ProxiesFlag), the check
// that no argument follows the flags (app.NoArgs), listening and serving
// (app.Listen, app.Serve) are helpers of examples/internal/app, which
// another module cannot import: copy them with the example.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
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
	h, err := newHandler(store, proxies)
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

// newHandler builds the mux, its limits kept in store, for clients behind
// the reverse proxies within proxies (none: clients connect directly).
func newHandler(store algorithms.Store, proxies []netip.Prefix) (http.Handler, error) {
	// Clients connect directly: the key is the peer address (IPv6 by /64).
	// Behind reverse proxies, the key trusts them: the client is the
	// address their X-Forwarded-For names (one that reaches the server
	// directly is still keyed by its own address, whatever it sends), and
	// the forwarding check below is told of them too.
	var trust []keyfunc.IPOption
	if len(proxies) > 0 {
		trust = append(trust, keyfunc.TrustedProxies(proxies...))
	}
	ip, err := keyfunc.IP(trust...)
	if err != nil {
		return nil, err
	}
	// The user is the signed-in user or, on /login, the submitted name.
	user, err := keyfunc.FirstOf(keyfunc.User(), app.FormValue("username"))
	if err != nil {
		return nil, err
	}
	ipUser, err := keyfunc.Join(ip, user)
	if err != nil {
		return nil, err
	}
	onError := middleware.WithErrorHandler(app.LogError)

	// Deployed behind a proxy the key does not trust, every client has the
	// proxy's address and all share one limit: the forwarding check, on by
	// default, says so once, to onError. Behind the proxies the key trusts,
	// it is given them too, or it would report the first request through
	// them.
	globalOpts := []middleware.Option{onError}
	if len(proxies) > 0 {
		globalOpts = append(globalOpts, middleware.CheckForwardingFrom("X-Forwarded-For", proxies...))
	}
	global, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
	}, globalOpts...)
	if err != nil {
		return nil, err
	}
	// One middleware per write endpoint, each wrapping its handler.
	strict := func(p *policy.Policy, err error) (func(http.Handler) http.Handler, error) {
		if err != nil {
			return nil, err
		}
		m, err := middleware.New(store, []*policy.Policy{p}, onError)
		if err != nil {
			return nil, err
		}
		return m.Handler, nil
	}
	login, err := strict(policy.Login(ipUser))
	if err != nil {
		return nil, err
	}
	register, err := strict(policy.Register(ipUser))
	if err != nil {
		return nil, err
	}
	comments, err := strict(policy.Comments(ipUser))
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.Hello)
	mux.Handle("POST /login", login(http.HandlerFunc(app.Hello)))
	mux.Handle("POST /register", register(http.HandlerFunc(app.Hello)))
	mux.Handle("POST /comments", comments(http.HandlerFunc(app.Hello)))
	return app.SignedIn(global.Handler(mux)), nil
}
