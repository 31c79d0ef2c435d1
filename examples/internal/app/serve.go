package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// NoArgs ends the program with a usage error (exit status 2) when
// arguments follow its flags: ignored, they would leave the flags the user
// meant to set at their defaults. example shows the flags, as "-addr
// 127.0.0.1:8081".
func NoArgs(example string) {
	if flag.NArg() == 0 {
		return
	}
	fmt.Fprintf(flag.CommandLine.Output(), "no arguments expected, got %q: give them as flags (%s)\n", flag.Args(), example)
	flag.Usage()
	os.Exit(2)
}

// Listen listens on the TCP address addr. An address in use is an error
// that says so and names addrFlag, the flag that chooses another.
func Listen(addr, addrFlag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%w: another program serves on %s; stop it, or choose another address with %s", err, addr, addrFlag)
	}
	return ln, err
}

// shutdownTimeout bounds the wait for the requests in flight when a server
// stops.
const shutdownTimeout = 10 * time.Second

// Serve serves h on ln until ctx is done (the examples' ctx ends on Ctrl-C
// or SIGTERM), then logs "shutting down", stops taking requests, waits for
// those in flight (at most 10 s) and returns nil; or it returns the error
// that stopped the server. ln is closed when it returns.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	// A client that trickles its headers or its body in does not hold a
	// connection for ever: the login key reads the form before the limit
	// is decided, its 64 KiB cap bounding its size, not its pace.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Printf("shutting down http://%s", ln.Addr())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-served // http.ErrServerClosed, once Shutdown has begun
	return err
}
