// Command client shows the outbound side of ratekeeper. A third-party API
// allows 5 requests per second — here a local stub, limited by ratekeeper's
// own middleware with a token bucket — and a program calls it from 20
// workers at once:
//
//   - through a plain http.Client, most calls are refused with 429;
//   - through client.Transport with WithRate(5, time.Second), the calls are
//     queued 200ms apart and every one is served (seed 002: queueing calls to
//     a rate-limited API through a leaky bucket is kinder than failing them).
//
// Run it with
//
//	go run ./examples/client
//	go run ./examples/client -n 50 -workers 10
//
// It prints, for example:
//
//	plain http.Client: 5 served, 15 refused with 429, in 0s
//	client.Transport:  20 served, 0 refused with 429, 0 retries, in 3.8s
//
// The Transport queues a call for at most a minute (WithMaxWait): of more
// calls at once than a minute's turns (-n 400 -workers 400), those further
// back fail at once with *client.WaitError, and are counted apart ("99
// failed at once (turn more than 1m0s away)").
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

func main() {
	n := flag.Int("n", 20, "calls to make")
	workers := flag.Int("workers", 20, "concurrent callers")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "no arguments expected, got %q: the counts are flags (-n 50 -workers 10)\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, client.SystemClock, *n, *workers, time.Minute); err != nil {
		log.Fatal(err)
	}
}

// run calls a fresh stub API n times from workers goroutines, first with a
// plain client and then through a pacing Transport that fails a call
// whose turn is more than maxWait away, and reports the outcome of each on
// out. Every clock reading and wait goes through clock.
func run(out io.Writer, clock client.Clock, n, workers int, maxWait time.Duration) error {
	if n < 1 {
		return fmt.Errorf("-n %d: want 1 or more calls", n)
	}
	if workers < 1 {
		return fmt.Errorf("-workers %d: want 1 or more callers", workers)
	}

	api, err := newAPI(clock)
	if err != nil {
		return err
	}
	start := clock.Now()
	// Every http.Client a program makes bounds its calls (the zero Client
	// waits for ever on a server that never answers).
	c, err := calls(&http.Client{Timeout: time.Minute}, api.URL, n, workers)
	api.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "plain http.Client: %d served, %d refused with 429, in %s\n", c.served, c.refused, clock.Now().Sub(start).Round(100*time.Millisecond))

	api, err = newAPI(clock)
	if err != nil {
		return err
	}
	defer api.Close()
	var retries atomic.Int64
	tr, err := client.New(nil,
		client.WithRate(5, time.Second), // the API's published limit
		client.WithMaxWait(maxWait),     // beyond that, fail fast
		client.WithClock(clock),         // the stub and the example share it
		client.WithOnRetry(func(client.Retry) { retries.Add(1) }),
	)
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	start = clock.Now()
	c, err = calls(&http.Client{Transport: tr, Timeout: maxWait + time.Minute}, api.URL, n, workers)
	if err != nil {
		return err
	}
	// Calls beyond the queue's reach (more than maxWait of turns ahead
	// of them: 300 or so at once, at 5 a second and a minute) failed at
	// once rather than wait.
	tooFar := ""
	if c.tooFar > 0 {
		tooFar = fmt.Sprintf(", %d failed at once (turn more than %s away)", c.tooFar, maxWait)
	}
	fmt.Fprintf(out, "client.Transport:  %d served, %d refused with 429, %d retries%s, in %s\n", c.served, c.refused, retries.Load(), tooFar, clock.Now().Sub(start).Round(100*time.Millisecond))
	return nil
}

// newAPI starts the stub third-party API: 5 requests per second for all
// callers together, as a token bucket holding 5.
func newAPI(clock client.Clock) (*httptest.Server, error) {
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		return nil, err
	}
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second}
	p, err := policy.New("api", spec, keyfunc.Global())
	if err != nil {
		return nil, err
	}
	m, err := middleware.New(store, []*policy.Policy{p}, middleware.WithClock(clock))
	if err != nil {
		return nil, err
	}
	quote := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"symbol":"RK","price":42}`)
	})
	return httptest.NewServer(m.Handler(quote)), nil
}

// tally counts the outcomes of calls: 200 served, 429 refused, and calls
// the Transport failed at once because their turn was more than its
// maximum wait away (*client.WaitError).
type tally struct{ served, refused, tooFar int }

// calls makes n GET calls to url from workers goroutines and counts the
// answers. Any other outcome is an error.
func calls(hc *http.Client, url string, n, workers int) (tally, error) {
	var mu sync.Mutex
	var c tally
	var firstErr error
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for range jobs {
				status, err := call(hc, url)
				mu.Lock()
				var we *client.WaitError
				switch {
				case errors.As(err, &we):
					c.tooFar++
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case status == http.StatusOK:
					c.served++
				case status == http.StatusTooManyRequests:
					c.refused++
				default:
					if firstErr == nil {
						firstErr = fmt.Errorf("unexpected status %d", status)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return c, firstErr
}

func call(hc *http.Client, url string) (int, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
