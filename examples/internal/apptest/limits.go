package apptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// quickStart429 is the eleventh answer of the README's first curl
// command ('/?[1-11]'), sent half a second into a minute: the response
// the README shows, less its Date and Content-Length.
var quickStart429 = struct {
	rateLimit, policy, retryAfter, body string
}{
	rateLimit:  `"per-second";r=0;t=1, "per-minute";r=90;t=66`,
	policy:     `"per-second";q=10;w=1, "per-minute";q=100;w=60`,
	retryAfter: "1",
	body:       `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,"detail":"Quota exceeded for per-second; retry in 1 second.","violated-policies":["per-second"]}` + "\n",
}

// CheckLimits checks over real HTTP, on in-memory stores with a manual
// clock, the limits the README promises of the example servers beyond
// Run's: the README's first curl command, eleven GET / at one instant
// half a second into a minute, gets ten 200s counting down the global
// policies and then the 429 the README shows, header for header and
// byte for byte; and POST /register is limited (10 per hour per IP and
// user): a user's eleventh sign-up within the hour is refused by the
// "register" policy, while another user still signs up.
func CheckLimits(t *testing.T, newHandler func(algorithms.Store) (http.Handler, error)) {
	t.Helper()
	serve := func() (*httptest.Server, *algotest.Clock) {
		t.Helper()
		clock := algotest.NewClock(time.Unix(1_700_000_040, 500_000_000)) // 1_700_000_040 is a whole minute
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		h, err := newHandler(store)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv, clock
	}
	do := func(srv *httptest.Server, r *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}

	// The quick start's curl 'http://127.0.0.1:8080/?[1-11]'.
	srv, _ := serve()
	for i := 1; i <= 11; i++ {
		r, _ := http.NewRequest("GET", srv.URL+"/", nil)
		resp, body := do(srv, r)
		if i <= 10 {
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Retry-After") != "" {
				t.Errorf("GET / %d: %d Retry-After %q, want 200 and none", i, resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			wantR := "r=" + strconv.Itoa(10-i) + ";"
			if got := resp.Header.Get("RateLimit"); !strings.HasPrefix(got, `"per-second";`+wantR) || !strings.Contains(got, `"per-minute";r=`+strconv.Itoa(100-i)+";") {
				t.Errorf("GET / %d: RateLimit %q, want per-second %s per-minute r=%d", i, got, wantR, 100-i)
			}
			continue
		}
		want := quickStart429
		for _, h := range []struct{ name, got, want string }{
			{"status", resp.Status, "429 Too Many Requests"},
			{"RateLimit", strings.Join(resp.Header.Values("RateLimit"), " | "), want.rateLimit},
			{"RateLimit-Policy", strings.Join(resp.Header.Values("RateLimit-Policy"), " | "), want.policy},
			{"Retry-After", resp.Header.Get("Retry-After"), want.retryAfter},
			{"Cache-Control", resp.Header.Get("Cache-Control"), "no-store"},
			{"Content-Type", resp.Header.Get("Content-Type"), "application/problem+json"},
			{"body", body, want.body},
		} {
			if h.got != h.want {
				t.Errorf("GET / 11: %s %q, want %q (the README's answer)", h.name, h.got, h.want)
			}
		}
	}

	// POST /register: 10 per hour per IP and user, one a second (under
	// the global policies).
	srv, clock := serve()
	register := func(user string) (*http.Response, string) {
		t.Helper()
		r, _ := http.NewRequest("POST", srv.URL+"/register", strings.NewReader(url.Values{"username": {user}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, body := do(srv, r)
		clock.Advance(time.Second)
		return resp, body
	}
	for i := 1; i <= 10; i++ {
		if resp, _ := register("ann"); resp.StatusCode != http.StatusOK {
			t.Fatalf("register %d of ann: %d, want 200", i, resp.StatusCode)
		}
	}
	resp, body := register("ann")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"violated-policies":["register"]`) {
		t.Errorf("register 11 of ann within the hour: %d %s, want 429 naming the register policy", resp.StatusCode, body)
	}
	if got := strings.Join(resp.Header.Values("RateLimit-Policy"), ", "); !strings.HasSuffix(got, `"register";q=10;w=3600`) {
		t.Errorf("register 11: RateLimit-Policy %q, want the register policy listed", got)
	}
	if resp, _ := register("bob"); resp.StatusCode != http.StatusOK {
		t.Errorf("register of another user: %d, want 200", resp.StatusCode)
	}
}
