package loadtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestRunReleasesItsConnections: an attack's keep-alive connections were
// left open when it ended (vegeta's client keeps them idle, and nothing
// closed them), so that every attack of an overhead run added Conns
// connections, with their goroutines and buffers on both sides, to the
// process every later measurement ran in: in a full run about 3,800 by the
// last one. Once Run returns, the server must see every connection of the
// attack closed.
func TestRunReleasesItsConnections(t *testing.T) {
	var (
		mu     sync.Mutex
		open   int
		closed = make(chan struct{})
		ended  bool
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(ok))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
		if ended && open == 0 {
			select {
			case <-closed:
			default:
				close(closed)
			}
		}
	}
	srv.Start()
	defer srv.Close()
	o, err := Run(context.Background(), Attack{Targets: []string{srv.URL}, Duration: 100 * time.Millisecond, Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if o.Codes[200] == 0 {
		t.Fatalf("no request answered 200: %v, first error %q", o.Codes, o.FirstError)
	}
	mu.Lock()
	ended = true
	left := open
	if left == 0 {
		close(closed)
	}
	mu.Unlock()
	if _, ok := hangguard.Within(closed, 5*time.Second); !ok {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("after the attack returned, %d of its connections are still open (%d when it returned)", open, left)
	}
}
