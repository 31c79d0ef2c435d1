package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Expired holds are swept as the map grows, so it stays as small as the set
// of keys currently held.
func TestHoldsSweep(t *testing.T) {
	var h holds
	h.m = map[string]time.Time{}
	for i := range 100 {
		h.extend(fmt.Sprint("host-", i), now.Add(time.Second), now)
	}
	later := now.Add(2 * time.Second)
	for i := range 100 {
		h.extend(fmt.Sprint("other-", i), later.Add(time.Second), later)
	}
	if n := len(h.m); n > 100 {
		t.Errorf("%d holds kept, want at most the 100 live ones", n)
	}
	if d := h.remaining("other-5", later); d != time.Second {
		t.Errorf("remaining = %v, want 1s", d)
	}
	// A hold never shrinks.
	h.extend("other-5", later.Add(time.Millisecond), later)
	if d := h.remaining("other-5", later); d != time.Second {
		t.Errorf("remaining after a shorter hold = %v, want 1s", d)
	}
	if d := h.remaining("host-1", later); d != 0 {
		t.Errorf("expired hold remaining %v", d)
	}
}

// Lines nobody uses are swept as the map grows; a line in use is kept, so
// that its requests and the ones that join them share one line.
func TestLinesSweep(t *testing.T) {
	ls := lines{m: map[string]*line{}}
	busy := ls.acquire("busy")
	for i := range 200 {
		ls.release(ls.acquire(fmt.Sprint("host-", i)))
	}
	if n := len(ls.m); n > 64 {
		t.Errorf("%d lines kept, want at most 64", n)
	}
	if got := ls.acquire("busy"); got != busy {
		t.Error("the line in use was swept")
	}
}

func TestHostKey(t *testing.T) {
	r := &http.Request{URL: &url.URL{Host: "API.Example.com:8443"}}
	if got := HostKey(r); got != "api.example.com:8443" {
		t.Errorf("HostKey = %q", got)
	}
	r = &http.Request{URL: &url.URL{Path: "/x"}, Host: "Example.org"}
	if got := HostKey(r); got != "example.org" {
		t.Errorf("HostKey without URL host = %q", got)
	}
	// One host, one queue: a port that is the scheme's default names the
	// same origin as no port at all (else a program mixing the two
	// spellings paces each at the full rate, twice the rate in all).
	for _, tc := range []struct{ url, want string }{
		{"https://api.example.com/v1", "api.example.com"},
		{"https://API.example.com:443/v1", "api.example.com"},
		{"http://api.example.com:80/", "api.example.com"},
		{"HTTP://api.example.com:80/", "api.example.com"},
		{"http://api.example.com:443/", "api.example.com:443"},
		{"https://api.example.com:80/", "api.example.com:80"},
		{"https://api.example.com:8443/", "api.example.com:8443"},
		{"https://[2001:DB8::1]:443/", "[2001:db8::1]"},
		{"https://[2001:db8::1]/", "[2001:db8::1]"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"https://api.example.com:/", "api.example.com"},
		// A trailing dot names the same host (a fully qualified name),
		// and an IPv6 address has many spellings.
		{"https://api.example.com./v1", "api.example.com"},
		{"https://api.example.com.:443/v1", "api.example.com"},
		{"https://api.example.com.:8443/v1", "api.example.com:8443"},
		{"https://[2001:db8:0:0:0:0:0:1]/", "[2001:db8::1]"},
		{"http://[0:0::1]:8080/", "[::1]:8080"},
		{"https://user:pw@api.example.com:443/", "api.example.com"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := HostKey(&http.Request{URL: u}); got != tc.want {
			t.Errorf("HostKey(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestSystemClock(t *testing.T) {
	before := time.Now()
	if got := SystemClock.Now(); got.Before(before) {
		t.Errorf("Now() = %v, before %v", got, before)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SystemClock.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context = %v", err)
	}
	if err := SystemClock.Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	if err := SystemClock.Sleep(context.Background(), time.Nanosecond); err != nil {
		t.Errorf("Sleep(1ns) = %v", err)
	}
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&WaitError{Key: "api", Wait: 3 * time.Second, MaxWait: time.Second},
			`client: request to "api" would wait 3s for its turn in the queue, more than the maximum wait 1s`},
		{&WaitError{Key: "api", Wait: 30 * time.Second, MaxWait: 10 * time.Second, Held: true},
			`client: request to "api" would wait 30s for the server's hold to pass, more than the maximum wait 10s`},
		{&RetryError{Attempts: 1, LastStatus: 429, Reason: reasonNoReplay},
			`client: gave up after 1 attempt (request cannot be replayed): last status 429 Too Many Requests`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if !strings.HasPrefix(tc.err.Error(), "client: ") {
			t.Errorf("%q lacks the package prefix", tc.err)
		}
	}
}
