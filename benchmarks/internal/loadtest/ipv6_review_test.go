package loadtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRunIPv6Loopback: Attack.Targets may be on any loopback address
// (checkLoopback accepts ::1 as it does 127.0.0.1), so a target on [::1]
// must be reached: every request answered. Requests left from 127.0.0.1
// whatever the target, and every one to [::1] failed to dial ("address
// 127.0.0.1:0: no suitable address found"). Targets of both families in one
// attack are refused: its requests leave from one address.
func TestRunIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(ok))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	o, err := Run(context.Background(), Attack{Targets: []string{srv.URL}, Rate: 100, Duration: 50 * time.Millisecond, Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if o.Requests == 0 || o.Codes[200] != o.Requests {
		t.Errorf("Run on %s: %d requests, codes %v, first error %q; want every one answered 200", srv.URL, o.Requests, o.Codes, o.FirstError)
	}
	if _, err := Run(context.Background(), Attack{Targets: []string{srv.URL, "http://127.0.0.1:1/"}, Rate: 1, Duration: time.Second, Conns: 1}); err == nil {
		t.Error("Run on [::1] and 127.0.0.1 at once: nil error")
	}
}
