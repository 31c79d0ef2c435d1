package middleware_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReverseProxyAfter103DropsRateLimitFields pins what the package doc
// says of net/http/httputil's ReverseProxy behind the middleware: after
// passing on a backend's 103 Early Hints it clears the response's header
// map, so the 103 carries the rate-limit fields and the final response
// does not. Should Go stop clearing them, this fails, and the doc's
// paragraph (# Responses) is to go.
func TestReverseProxyAfter103DropsRateLimitFields(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		_, _ = w.Write([]byte("ok"))
	}))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.New("proxied", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, user)),
	})
	mux := http.NewServeMux()
	mux.Handle("GET /page", m.Handler(httputil.NewSingleHostReverseProxy(target)))
	front := httptest.NewServer(mux)
	defer front.Close()

	req, err := http.NewRequest(http.MethodGet, front.URL+"/page", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-User", "alice")
	resp, early := doEarlyHints(t, front.Client(), req)
	if resp.StatusCode != http.StatusOK || len(early) != 1 {
		t.Fatalf("GET /page = %d after %d 103s; want 200 after one 103", resp.StatusCode, len(early))
	}
	// The 103 carries the request's fields (t, the rest of the store
	// clock's hour, is not the point here).
	if got, want := early[0].Get(middleware.HeaderRateLimit), `"proxied";r=4;t=`; !strings.HasPrefix(got, want) {
		t.Errorf("the 103's RateLimit = %q, want %q followed by its t", got, want)
	}
	if got := resp.Header.Values(middleware.HeaderRateLimit); len(got) != 0 {
		t.Errorf("the final response's RateLimit = %q; the doc says ReverseProxy cleared it after the 103 (update the doc if Go no longer does)", got)
	}
}

// doEarlyHints sends req with client and returns its final response (its
// body read and closed) and the header of each 103 Early Hints before it.
func doEarlyHints(t *testing.T, client *http.Client, req *http.Request) (*http.Response, []textproto.MIMEHeader) {
	t.Helper()
	var mu sync.Mutex
	var early []textproto.MIMEHeader
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			mu.Lock()
			defer mu.Unlock()
			if code == http.StatusEarlyHints {
				early = append(early, h)
			}
			return nil
		},
	}))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	return resp, early
}
