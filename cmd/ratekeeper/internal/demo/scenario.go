package demo

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// stateHeaders are the response headers the demo prints for each request,
// whichever profile sends them (RateLimit-Policy is printed once).
var stateHeaders = []string{"RateLimit", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}

// Start is the simulated time the scenarios begin at.
var Start = time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)

// script drives the demo server over HTTP, moving the simulated clock
// before each request.
type script struct {
	w      io.Writer
	clock  *Clock
	client *http.Client
	base   string
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (s *script) do(at time.Duration, method, path, username string) (reply, error) {
	s.clock.Set(Start.Add(at))
	var body io.Reader
	if username != "" {
		body = strings.NewReader(url.Values{"username": {username}}.Encode())
	}
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: strings.TrimSpace(string(b))}, nil
}

func (s *script) line(at time.Duration, what string, r reply, note string) {
	fmt.Fprintf(s.w, "  t=%-7s %-28s -> %d %s", fmtDur(at), what, r.status, http.StatusText(r.status))
	if note != "" {
		fmt.Fprintf(s.w, "  (%s)", note)
	}
	fmt.Fprintln(s.w)
	for _, k := range stateHeaders {
		// Nested middlewares (global, then the login rules) each add a line.
		if v := r.header.Values(k); len(v) > 0 {
			fmt.Fprintf(s.w, "      %s: %s\n", k, strings.Join(v, ", "))
		}
	}
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// runHTTP plays the HTTP part of the demo, the middleware sending the
// headers of profile.
func runHTTP(w io.Writer, profile middleware.Profile) error {
	clock := &Clock{t: Start}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		return err
	}
	defer store.Close()
	h, err := NewHandler(store, clock, profile)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	s := &script{w: w, clock: clock, client: srv.Client(), base: srv.URL}

	fmt.Fprintln(w, "1. A client (127.0.0.1) and the rate-limit headers it gets")
	fmt.Fprintln(w, "   policies: per-second 10/s and per-minute 100/min per IP (sliding window counter)")
	r, err := s.do(0, "GET", "/", "")
	if err != nil {
		return err
	}
	if v := r.header.Get("RateLimit-Policy"); v != "" {
		fmt.Fprintf(w, "      RateLimit-Policy: %s\n", v)
	}
	s.line(0, "GET /", r, "")
	at := 300 * time.Millisecond
	r, err = s.do(at, "GET", "/", "")
	if err != nil {
		return err
	}
	s.line(at, "GET /", r, "")

	// A burst of 12 requests in one instant: the per-second limit bites.
	at = 600 * time.Millisecond
	counts := map[int]int{}
	var first429 reply
	for range 12 {
		r, err := s.do(at, "GET", "/", "")
		if err != nil {
			return err
		}
		counts[r.status]++
		if r.status == http.StatusTooManyRequests && first429.status == 0 {
			first429 = r
		}
	}
	fmt.Fprintf(w, "  t=%-7s %-28s -> %d x 200, %d x 429\n", fmtDur(at), "12 x GET / at once", counts[200], counts[429])
	if first429.status != 0 {
		fmt.Fprintln(w, "      the first 429:")
		for _, k := range append(stateHeaders, "Cache-Control", "Content-Type") {
			if v := first429.header.Values(k); len(v) > 0 {
				fmt.Fprintf(w, "        %s: %s\n", k, strings.Join(v, ", "))
			}
		}
		fmt.Fprintf(w, "        body: %s\n", first429.body)
	}
	at = 1600 * time.Millisecond
	r, err = s.do(at, "GET", "/", "")
	if err != nil {
		return err
	}
	s.line(at, "GET /", r, "a second later: allowed again")

	fmt.Fprintln(w)
	fmt.Fprintln(w, "2. A login throttled per IP and user")
	fmt.Fprintln(w, "   policy login: 5 per minute, sliding log, key client IP + user name, on POST /login")
	for i := range 6 {
		at = time.Duration(5+i) * time.Second
		r, err := s.do(at, "POST", "/login", "ann")
		if err != nil {
			return err
		}
		note := ""
		if i == 5 {
			note = "the sixth try within a minute"
		}
		s.line(at, "POST /login username=ann", r, note)
		if r.status == http.StatusTooManyRequests {
			fmt.Fprintf(w, "      body: %s\n", r.body)
		}
	}
	at = 11 * time.Second
	if r, err = s.do(at, "POST", "/login", "bob"); err != nil {
		return err
	}
	s.line(at, "POST /login username=bob", r, "another account, same address: its own allowance")
	at = 65500 * time.Millisecond
	if r, err = s.do(at, "POST", "/login", "ann"); err != nil {
		return err
	}
	s.line(at, "POST /login username=ann", r, "ann's first try has left the window")
	return nil
}
