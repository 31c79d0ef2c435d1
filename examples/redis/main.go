// Command redis shows two application instances sharing one limit through
// Redis: both serve the same handler behind the ratekeeper middleware, each
// with its own go-redis client and redisstore.Store, and a client that
// alternates between them gets 5 requests per minute in all, not 5 from
// each.
//
//	redis-server --port 6390 --save '' --appendonly no &
//	go run ./examples/redis -redis 127.0.0.1:6390 &
//	for i in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{http_code}\n' http://127.0.0.1:808$((i % 2 + 1))/; done
//
// Each instance decides every request in one Redis round trip, on the Redis
// server's clock (so instance clocks may disagree), fails open while Redis
// is unreachable (the middleware's default), and after 5 failed calls in a
// row stops calling Redis for 5 seconds (the middleware's default circuit
// breaker, whose "circuit breaker open" errors the log shows; the store's
// own, WithCircuitBreaker, is set too).
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/redis/go-redis/v9"
)

func main() {
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis address")
	addrs := [2]*string{
		flag.String("a", "127.0.0.1:8081", "listen address of instance a"),
		flag.String("b", "127.0.0.1:8082", "listen address of instance b"),
	}
	flag.Parse()
	errs := make(chan error, 2)
	for i, addr := range addrs {
		name := string(rune('a' + i))
		// Each instance has its own client, as separate processes would.
		client := newClient(*redisAddr)
		h, err := newInstance(name, client)
		if err != nil {
			log.Fatal(err)
		}
		srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
		log.Printf("instance %s listening on http://%s", name, *addr)
		go func() { errs <- srv.ListenAndServe() }()
	}
	log.Fatal(<-errs)
}

// newClient returns an instance's Redis client, with the I/O bounded by
// each call's context and short timeouts, so that a dead Redis is noticed
// at once (the store's WithTimeout bounds the whole call, redials and
// retries included).
func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           100 * time.Millisecond,
		ReadTimeout:           100 * time.Millisecond,
		WriteTimeout:          100 * time.Millisecond,
	})
}

// newInstance returns one instance's handler: 5 requests per minute per
// client IP, the limit kept in Redis under the prefix "example". A Take
// that Redis does not answer within 250ms fails (and the middleware lets
// the request through).
func newInstance(name string, client redis.UniversalClient) (http.Handler, error) {
	store, err := redisstore.New(client, redisstore.WithPrefix("example"),
		redisstore.WithTimeout(250*time.Millisecond), redisstore.WithCircuitBreaker(5, 5*time.Second))
	if err != nil {
		return nil, err
	}
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, err
	}
	m, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-minute", 5, ip)),
	}, middleware.WithErrorHandler(func(r *http.Request, err error) {
		log.Printf("instance %s: rate limiter: %v", name, err)
	}))
	if err != nil {
		return nil, err
	}
	return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from instance %s\n", name)
	})), nil
}
