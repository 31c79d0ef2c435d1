// Command redis shows two application instances sharing one limit through
// Redis: both serve the same handler behind the ratekeeper middleware, each
// with its own go-redis client and redisstore.Store, and a client that
// alternates between them gets 5 requests per minute in all, not 5 from
// each.
//
//	redis-server --port 6390 --save '' --appendonly no &
//	go build -o /tmp/rk-redis ./examples/redis
//	/tmp/rk-redis -redis 127.0.0.1:6390 &
//	sleep 1
//	for i in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{http_code}\n' http://127.0.0.1:808$((i % 2 + 1))/; done
//
// Each instance decides every request in one Redis round trip, on the Redis
// server's clock (so instance clocks may disagree), fails open while Redis
// is unreachable (the middleware's default), and after 5 failed calls in a
// row stops calling Redis for 5 seconds (the middleware's default circuit
// breaker, whose "circuit breaker open" errors the log shows; the store's
// own, WithCircuitBreaker, is set too). Ctrl-C (SIGINT) or SIGTERM (kill $!)
// stops both instances, once the requests in flight are answered. Run the
// built binary: under go run, $! is the go command, which kill $! ends
// without stopping the instances, and what follows it runs while go still
// compiles. The checks of the flags (app.CheckAddr for each address,
// app.NoArgs for an argument after them), listening and serving until then
// (app.Listen, app.Serve) are helpers of examples/internal/app, which
// another module cannot import: copy them with the example.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/redis/go-redis/v9"
)

func main() {
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis address")
	a := flag.String("a", "127.0.0.1:8081", "listen address of instance a")
	b := flag.String("b", "127.0.0.1:8082", "listen address of instance b")
	flag.Parse()
	app.NoArgs("-redis 127.0.0.1:6390")
	// Ctrl-C (SIGINT) or SIGTERM stops both instances, once the requests
	// in flight are answered.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *redisAddr, *a, *b); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// run serves instance a on addrA and b on addrB, both with the Redis at
// redisAddr, until ctx is done or one of them fails.
func run(ctx context.Context, redisAddr, addrA, addrB string) error {
	type instance struct {
		name, addr string
		h          http.Handler
		ln         net.Listener
	}
	instances := []*instance{{name: "a", addr: addrA}, {name: "b", addr: addrB}}
	// A malformed address is said at once, not after the Redis check: a
	// -redis of a port alone ("6390", as redis-server --port takes it)
	// would otherwise leave the instances failing open for good.
	if err := app.CheckAddr(redisAddr, "-redis"); err != nil {
		return err
	}
	for _, in := range instances {
		if err := app.CheckAddr(in.addr, "-"+in.name); err != nil {
			return err
		}
	}
	for i, in := range instances {
		// Each instance has its own client, as separate processes would.
		client := newClient(redisAddr)
		defer client.Close()
		if i == 0 {
			// Said at once: otherwise every request is let through
			// and only the error log tells why.
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			if err := client.Ping(pctx).Err(); err != nil {
				// The client retries its dials until the deadline,
				// which is then all its error says: one dial of our
				// own tells why ("connection refused").
				if c, derr := net.DialTimeout("tcp", redisAddr, 200*time.Millisecond); derr != nil {
					err = derr
				} else {
					c.Close()
				}
				log.Printf("Redis at %s does not answer within 1s (%v): the instances let every request through (fail open) until it does", redisAddr, err)
			}
			cancel()
		}
		h, store, err := newInstance(in.name, client, nil)
		if err != nil {
			return err
		}
		// Closed once the servers have stopped, before the client (defers
		// run last first), as the README's Redis section says.
		defer store.Close()
		in.h = h
	}
	// Both addresses are taken before either instance serves: a port in
	// use stops the example at once.
	for _, in := range instances {
		ln, err := app.Listen(in.addr, "-"+in.name)
		if err != nil {
			for _, in := range instances {
				if in.ln != nil {
					in.ln.Close()
				}
			}
			return err
		}
		in.ln = ln
	}
	ctx, cancel := context.WithCancel(ctx) // one instance failing stops both
	defer cancel()
	errs := make(chan error, len(instances))
	for _, in := range instances {
		log.Printf("instance %s listening on http://%s", in.name, in.ln.Addr())
		go func() { errs <- app.Serve(ctx, in.ln, in.h) }()
	}
	var first error
	for range instances {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// newClient returns an instance's Redis client, with the I/O bounded by
// each call's context and short timeouts, so that a dead Redis is noticed
// at once (the store's WithTimeout bounds the whole call, redials and
// retries included).
func newClient(addr string) *redis.Client {
	return redis.NewClient(clientOptions(addr))
}

// clientOptions returns the options of newClient's client (its tests
// lengthen the timeouts of theirs).
func clientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           100 * time.Millisecond,
		ReadTimeout:           100 * time.Millisecond,
		WriteTimeout:          100 * time.Millisecond,
	}
}

// newInstance returns one instance's handler and its store, which the
// caller closes once the handler serves no more: 5 requests per minute per
// client IP, the limit kept in Redis under the prefix "example". A Take
// that Redis does not answer within 250ms fails (and the middleware lets
// the request through): shorter than the store's default timeout, 2s
// (redisstore.DefaultTimeout), which this client's short timeouts allow.
// The store takes opts after the example's own options, which they
// override (its tests lengthen the timeout), and a clock that is not nil
// replaces the Redis server's and the system's (the decisions' time, the
// circuit breakers' cooldowns): main gives neither.
func newInstance(name string, client redis.UniversalClient, clock algorithms.Clock, opts ...redisstore.Option) (http.Handler, *redisstore.Store, error) {
	storeOpts := []redisstore.Option{redisstore.WithPrefix("example"),
		redisstore.WithTimeout(250 * time.Millisecond), redisstore.WithCircuitBreaker(5, 5*time.Second)}
	// WithLogger samples what it logs (store errors: at most 10 a second;
	// a record when the store starts failing and one when it answers
	// again), so an outage of Redis does not write a line per request.
	// It names a denied client by a hash (pk) under a secret each instance
	// draws at random, so one client has another pk on each: to follow a
	// client across instances, give them all one secret of at least 16
	// bytes, kept as any other (middleware.WithPartitionKey).
	mwOpts := []middleware.Option{middleware.WithLogger(slog.Default().With("instance", name))}
	if clock != nil {
		storeOpts = append(storeOpts, redisstore.WithClock(clock))
		mwOpts = append(mwOpts, middleware.WithClock(clock))
	}
	store, err := redisstore.New(client, append(storeOpts, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, nil, err
	}
	m, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-minute", 5, ip)),
	}, mwOpts...)
	if err != nil {
		return nil, nil, err
	}
	return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from instance %s\n", name)
	})), store, nil
}
