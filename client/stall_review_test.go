package client_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// stallBody is a response body from a hostile or broken server: it gives
// data, then no byte more and no end, until it is closed (a closed
// net/http body ends a read blocked on its connection the same way).
type stallBody struct {
	data   []byte
	closed chan struct{}
	once   sync.Once
}

func newStallBody(data string) *stallBody {
	return &stallBody{data: []byte(data), closed: make(chan struct{})}
}

func (b *stallBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	<-b.closed
	return 0, errors.New("read on a closed body")
}

func (b *stallBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

func (b *stallBody) isClosed() bool {
	select {
	case <-b.closed:
		return true
	default:
		return false
	}
}

// stalled429 answers the first attempt with a 429 (Retry-After: 1) whose
// body stalls, and every later one with a 200.
func stalled429(body *stallBody) http.RoundTripper {
	var n int
	var mu sync.Mutex
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			h := http.Header{"Retry-After": {"1"}}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: body, ContentLength: 100, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
}

// A 429 whose body stalls (headers sent, then nothing) does not hold the
// retry, or RoundTrip, for as long as the server likes: the Transport reads
// what is left of a refusal's body before it retries, so that the
// connection can be reused, but only for a bounded time; then it closes the
// body and goes on. Without a context deadline, RoundTrip would otherwise
// never return, whatever the retry and wait bounds.
func TestStalledRefusalBodyDoesNotHoldTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := newStallBody("slow")
		tr, err := client.New(stalled429(body))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
		type result struct {
			resp *http.Response
			err  error
			took time.Duration
		}
		done := make(chan result, 1)
		go func() {
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			done <- result{resp, err, time.Since(start)}
		}()
		time.Sleep(time.Hour) // virtual time, in the bubble
		var res result
		select {
		case res = <-done:
		default:
			t.Error("RoundTrip still blocked, an hour on, reading the stalled body of a 429")
			body.Close() // let it end
			res = <-done
		}
		if res.err != nil || res.resp.StatusCode != http.StatusOK {
			t.Fatalf("RoundTrip = %v, %v; want the retry's 200", res.resp, res.err)
		}
		res.resp.Body.Close()
		// A second for the body, which is the second the server asked
		// for: its Retry-After counts from its response, for the retry as
		// for the other requests of the key it holds.
		if want := time.Second; res.took != want {
			t.Errorf("RoundTrip took %v, want %v", res.took, want)
		}
		if !body.isClosed() {
			t.Error("the stalled body of the 429 was not closed")
		}
	})
}

// With WithGiveUpError the last refusal's body is read and closed before
// the *RetryError comes back: a stalled one does not hold RoundTrip either.
func TestStalledRefusalBodyDoesNotHoldTheGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := newStallBody("slow")
		tr, err := client.New(stalled429(body), client.WithRetries(0), client.WithGiveUpError())
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
		done := make(chan error, 1)
		var took time.Duration
		go func() {
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			took = time.Since(start)
			if resp != nil {
				resp.Body.Close()
			}
			done <- err
		}()
		time.Sleep(time.Hour) // virtual time, in the bubble
		var err2 error
		select {
		case err2 = <-done:
		default:
			t.Error("RoundTrip still blocked, an hour on, reading the stalled body of the last 429")
			body.Close()
			err2 = <-done
		}
		if took != time.Second {
			t.Errorf("RoundTrip took %v, want the second it reads a body for", took)
		}
		var re *client.RetryError
		if !errors.As(err2, &re) || re.LastStatus != http.StatusTooManyRequests {
			t.Errorf("RoundTrip error = %v, want a *RetryError for the 429", err2)
		}
		if !body.isClosed() {
			t.Error("the stalled body of the 429 was not closed")
		}
	})
}
