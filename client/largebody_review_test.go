package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Large request bodies on retry, against our own middleware (one request
// a second for everyone, behind chi and behind a ServeMux): the middleware
// refuses before the handler reads a byte, so net/http's server leaves a
// large body unread and closes the connection. A request that may be
// replayed (a PUT; a POST with an Idempotency-Key) is retried once, after
// the Retry-After (in the next window), and the handler receives its body whole, 8 MiB
// included; one that may not (a PATCH; a body without GetBody) comes back
// as the 429, and the handler never ran for it.
func TestLargeBodiesOnRetry(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			clock := newAutoClock()
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			p, err := policy.New("api", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}, keyfunc.Global())
			if err != nil {
				t.Fatal(err)
			}
			m, err := middleware.New(store, []*policy.Policy{p}, middleware.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got [][32]byte // the digests of the bodies the handler read
			handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("handler: reading the body: %v", err)
				}
				mu.Lock()
				got = append(got, sha256.Sum256(b))
				mu.Unlock()
				io.WriteString(w, "ok")
			})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(m.Handler)
				r.Handle("/upload", handler)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("/upload", m.Handler(handler))
				h = mux
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			var retries []client.Retry
			// Proactive pacing off: each request meets the 429 of the
			// one before it instead of waiting for its RateLimit hold.
			_, tr := newClient(t, clock, client.WithProactive(false),
				client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))

			for _, tc := range []struct {
				name, method string
				size         int
				key          bool // an Idempotency-Key
				noGetBody    bool
				want         int // the status the caller gets
				retried      bool
			}{
				{"PUT 1 MiB", http.MethodPut, 1 << 20, false, false, 200, true},
				{"POST 8 MiB with key", http.MethodPost, 8 << 20, true, false, 200, true},
				{"PATCH 1 MiB", http.MethodPatch, 1 << 20, false, false, 429, false},
				{"PUT 1 MiB without GetBody", http.MethodPut, 1 << 20, false, true, 429, false},
			} {
				// A request with no body takes the window's one admission.
				clock.Advance(time.Second)
				if err := roundTrip(context.Background(), tr, srv.URL+"/upload", ""); err != nil {
					t.Fatal(err)
				}
				body := bytes.Repeat([]byte(tc.name[:1]), tc.size)
				mu.Lock()
				got = nil
				mu.Unlock()
				retries = nil
				req, _ := http.NewRequest(tc.method, srv.URL+"/upload", bytes.NewReader(body))
				if tc.key {
					req.Header.Set("Idempotency-Key", "upload-1")
				}
				if tc.noGetBody {
					req.Body = io.NopCloser(bytes.NewReader(body))
					req.GetBody = nil
				}
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Errorf("%s: status %d %q, want %d", tc.name, resp.StatusCode, strings.TrimSpace(string(b)), tc.want)
				}
				if tc.retried != (len(retries) == 1) || len(retries) > 1 {
					t.Errorf("%s: retries %+v, want retried %v (once)", tc.name, retries, tc.retried)
				}
				mu.Lock()
				sums := got
				mu.Unlock()
				switch want := sha256.Sum256(body); {
				case tc.want != 200 && len(sums) != 0:
					t.Errorf("%s: the handler read %d bodies, want none", tc.name, len(sums))
				case tc.want == 200 && (len(sums) != 1 || sums[0] != want):
					t.Errorf("%s: the handler read %d bodies (whole: %v), want the %d bytes once",
						tc.name, len(sums), len(sums) == 1 && sums[0] == want, tc.size)
				}
			}
		})
	}
}
