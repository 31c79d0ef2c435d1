package app_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// wait bounds each wait of the tests below: a guard against a hang.
const wait = 20 * time.Second

// TestServeAnswersInFlight: the examples stop on Ctrl-C "once the requests
// in flight are answered" (the README): a request the handler is still
// answering when the context ends gets its whole answer, Serve stops
// taking connections and returns nil once it has.
func TestServeAnswersInFlight(t *testing.T) {
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(io.Discard) // "shutting down http://..."
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "answered")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln, h) }()

	type reply struct {
		body string
		err  error
	}
	replied := make(chan reply, 1)
	go func() {
		resp, err := (&http.Client{Timeout: wait}).Get("http://" + addr + "/")
		if err != nil {
			replied <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		replied <- reply{string(b), err}
	}()
	hangguard.Await(t, entered, wait, "the request did not reach the handler")

	cancel()
	// The handler answers only once the shutdown has begun: once Serve
	// has closed its listener, which it does first.
	closed := hangguard.Poll(wait, time.Millisecond, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	if !closed {
		t.Fatalf("Serve still takes connections on %s after its context ended", addr)
	}
	close(release)

	if r := hangguard.Await(t, replied, wait, "the request in flight got no answer"); r.err != nil || r.body != "answered" {
		t.Errorf("the request in flight at shutdown: %q, %v; want its answer, \"answered\"", r.body, r.err)
	}
	if err := hangguard.Await(t, served, wait, "Serve did not return after its context ended"); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}
