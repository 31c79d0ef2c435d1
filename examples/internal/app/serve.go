package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
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

// CheckAddr returns an error naming addrFlag and addr when addr, the
// value of the flag, is not a TCP address to listen on (HOST:PORT, HOST
// optional); nil otherwise. It looks no host name up.
func CheckAddr(addr, addrFlag string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT, such as 127.0.0.1:8080 or :8080 (%w)", addrFlag, addr, err)
	}
	return nil
}

// Listen listens on the TCP address addr, the value of the flag addrFlag.
// Its errors name the flag and the value (see CheckAddr); an address in
// use says so and names addrFlag as the flag that chooses another.
func Listen(addr, addrFlag string) (net.Listener, error) {
	if err := CheckAddr(addr, addrFlag); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%w: another program serves on %s; stop it, or choose another address with %s", err, addr, addrFlag)
	case err != nil:
		return nil, fmt.Errorf("%s %q: %w", addrFlag, addr, err)
	}
	return ln, nil
}

// shutdownTimeout bounds the wait for the requests in flight when a server
// stops.
const shutdownTimeout = 10 * time.Second

// NewServer returns the examples' http.Server for h, with its timeouts
// set: a client has 5 s to send a request's headers and 10 s to send the
// whole request (the login key reads the form before the limit is
// decided, its 64 KiB cap bounding its size, not its pace), and a
// connection kept alive is closed after 10 s without a request. Without
// ReadTimeout and IdleTimeout (ReadHeaderTimeout alone), a client
// trickling a body in, or many connections left idle, would hold the
// server's connections for ever.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       10 * time.Second,
	}
}

// Serve serves h on ln with a NewServer until ctx is done (the examples'
// ctx ends on Ctrl-C or SIGTERM), then logs "shutting down", stops taking requests, waits for
// those in flight (at most 10 s) and returns nil; or it returns the error
// that stopped the server. ln is closed when it returns.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := NewServer(h) // its timeouts bound a slow or idle client
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

// ProxiesFlag defines the flag name of the reverse proxies in front of the
// server, which the example's client-IP key is to trust: a comma-separated
// list of addresses (192.0.2.7) and networks (10.0.0.0/8), as the
// trusted_proxies of a configuration file (see ParseProxies).
func ProxiesFlag(name string) *[]netip.Prefix {
	var proxies []netip.Prefix
	flag.Func(name, "trusted reverse `PROXIES` (comma-separated addresses and networks, 10.0.0.0/8): the client is the address their X-Forwarded-For names", func(s string) error {
		p, err := ParseProxies(s)
		proxies = append(proxies, p...)
		return err
	})
	return &proxies
}

// ParseProxies parses a comma-separated list of addresses and networks: an
// address is the network of that address alone (192.0.2.7/32). A network
// with host bits set (10.0.0.5/16) is refused, naming the two things it
// may mean, as keyfunc.IP would refuse it; refused here, its error is the
// flag's, which the flag package names.
func ParseProxies(s string) ([]netip.Prefix, error) {
	var proxies []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if p, err := netip.ParsePrefix(f); err == nil {
			if m := p.Masked(); m != p {
				return nil, fmt.Errorf("%s has bits set past its /%d: write %s for that proxy alone, or %s for its whole network", p, p.Bits(), p.Addr(), m)
			}
			proxies = append(proxies, p)
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a network", f)
		}
		proxies = append(proxies, netip.PrefixFrom(a, a.BitLen()))
	}
	return proxies, nil
}
