package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// An http.Client follows a 307 from one host to another: each hop is a
// RoundTrip of its own, keyed by its own host. A POST with an
// Idempotency-Key, redirected and then refused with a Retry-After by the
// second host, is retried there with its body replayed in full (GetBody,
// which the redirect carries over); the hold lands on the second host only,
// and the pacing queues of the two hosts are apart.
func TestRedirectToAnotherHost(t *testing.T) {
	clock := newAutoClock()
	b := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "slow down")
			return
		}
		io.WriteString(w, "ok "+r.Header.Get("Idempotency-Key"))
	})
	a := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, b.URL+"/moved", http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock, client.WithRate(1, 10*time.Second))
	req, _ := http.NewRequest(http.MethodPost, a.URL, strings.NewReader("order=1"))
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok k1" {
		t.Fatalf("got %d %q, want the second host's 200", resp.StatusCode, body)
	}
	if got := a.received(); !slices.Equal(got, []string{"order=1"}) {
		t.Errorf("the first host received %q, want the POST once", got)
	}
	if got := b.received(); !slices.Equal(got, []string{"order=1", "order=1"}) {
		t.Errorf("the second host received %q, want the POST twice, its body whole each time", got)
	}
	// The redirect went at once (another host, another queue); the retry
	// after the Retry-After hold, at the second host's next turn (10s).
	if got, want := b.arrivals(), []time.Duration{0, 10 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("the second host's arrivals %v, want %v", got, want)
	}
	// The first host is neither held by the second's Retry-After nor
	// queued behind its retry: its next turn is 10s after its first.
	if status, _, err := get(hc, a.URL); err != nil || status != 200 {
		t.Fatalf("got %d %v", status, err)
	}
	if got, want := a.arrivals(), []time.Duration{0, 10 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("the first host's arrivals %v, want %v", got, want)
	}
}

// Through a forward proxy (http.Transport's Proxy), requests are keyed by
// the host they are for, not by the proxy: a Retry-After from one target
// holds that target, and the other target, through the same proxy, goes
// at once.
func TestThroughAProxyKeyedByTarget(t *testing.T) {
	clock := newAutoClock()
	var mu sync.Mutex
	seen := map[string][]time.Duration{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A forward proxy receives the target's absolute URL.
		mu.Lock()
		seen[r.URL.Host] = append(seen[r.URL.Host], clock.Now().Sub(t0))
		n := len(seen[r.URL.Host])
		mu.Unlock()
		if r.URL.Host == "a.example" && n == 1 {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(proxy.Close)
	proxyURL, _ := url.Parse(proxy.URL)
	next := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	t.Cleanup(next.CloseIdleConnections)
	tr, err := client.New(next, client.WithClock(clock), client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	for _, u := range []string{"http://a.example/", "http://b.example/", "http://a.example/"} {
		if _, _, err := get(hc, u); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := seen["a.example"], []time.Duration{0, 5 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("a.example saw requests at %v, want %v (held by its Retry-After)", got, want)
	}
	if got, want := seen["b.example"], []time.Duration{0}; !slices.Equal(got, want) {
		t.Errorf("b.example saw requests at %v, want %v (not held by a.example's)", got, want)
	}
}
