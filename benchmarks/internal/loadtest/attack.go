package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// An Attack is one bounded load run with vegeta: GET requests spread in turn
// over Targets, at Rate for Duration, from at most Conns connections.
type Attack struct {
	// Targets are the URLs requested in turn; each must be on a loopback
	// address, all of one family: requests leave from 127.0.0.1 (::1 for
	// IPv6 targets).
	Targets []string
	// Rate is the number of requests per second; 0 sends as fast as Conns
	// connections allow (each waits for its response before sending again).
	Rate float64
	// Duration bounds the attack; it must be positive.
	Duration time.Duration
	// Conns is the number of concurrent connections (and vegeta workers).
	Conns int
	// Timeout bounds each request; 0 means 10 s.
	Timeout time.Duration
}

// An Outcome is what an Attack observed, client side.
type Outcome struct {
	// Requests is the number of requests sent.
	Requests int
	// Codes counts responses by status code; code 0 counts transport errors.
	Codes map[int]int
	// Latencies holds every request's latency (send to last byte read),
	// sorted.
	Latencies []time.Duration
	// Elapsed is the time from the first request to the last response.
	Elapsed time.Duration
	// FirstError is the text of the first error response or transport
	// error, if any.
	FirstError string
}

// Quantile returns the q-quantile (0..1) of the latencies by the nearest-rank
// method, or 0 when there are none.
func (o *Outcome) Quantile(q float64) time.Duration {
	return quantile(o.Latencies, q)
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := nearestRank(q, len(sorted)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// nearestRank returns ⌈q·n⌉, the rank of the q-quantile of n values. A
// q·n within a relative 1e-12 of a whole number is that number: q is a
// binary fraction (0.07·100 is 7.000000000000001 in float64), and the
// quantiles asked for (0.5 to 0.999) put q·n at least 0.001 from the next
// whole number when it is not one.
func nearestRank(q float64, n int) int {
	x := q * float64(n)
	if r := math.Round(x); math.Abs(x-r) <= 1e-12*x {
		return int(r)
	}
	return int(math.Ceil(x))
}

// Throughput returns the responses with status 200 per second of Elapsed.
func (o *Outcome) Throughput() float64 {
	if o.Elapsed <= 0 {
		return 0
	}
	return float64(o.Codes[200]) / o.Elapsed.Seconds()
}

// checkLoopback refuses any target that is not an http URL on a loopback
// address.
func checkLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("loadtest: target %q: %w", target, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("loadtest: target %q: scheme must be http", target)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("loadtest: target %q is not a loopback address; load is only ever sent to this machine", target)
	}
	return nil
}

// isV6 reports whether target, a URL checkLoopback accepted, is on an
// IPv6 address (localhost is taken as 127.0.0.1).
func isV6(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.Is6() && !ip.Is4In6()
}

// Run runs a and returns what it observed. It stops by itself after
// a.Duration (plus the time to finish the requests in flight), or earlier
// when ctx is done.
func Run(ctx context.Context, a Attack) (*Outcome, error) {
	if len(a.Targets) == 0 {
		return nil, errors.New("loadtest: Attack: Targets is empty")
	}
	v6 := 0
	for _, t := range a.Targets {
		if err := checkLoopback(t); err != nil {
			return nil, err
		}
		if isV6(t) {
			v6++
		}
	}
	// Requests leave from the loopback address of the targets' family
	// (127.0.0.1, or ::1 for targets on IPv6 loopback addresses): one
	// client address for the server to key by, which a connection to the
	// other family could not have.
	local := net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}
	switch v6 {
	case 0:
	case len(a.Targets):
		local = net.IPAddr{IP: net.IPv6loopback}
	default:
		return nil, errors.New("loadtest: Attack: Targets mix IPv4 and IPv6 loopback addresses; requests leave from one")
	}
	if a.Duration <= 0 || a.Duration > 10*time.Minute {
		return nil, fmt.Errorf("loadtest: Attack: Duration must be in (0, 10m], got %s", a.Duration)
	}
	if a.Conns <= 0 {
		return nil, fmt.Errorf("loadtest: Attack: Conns must be positive, got %d", a.Conns)
	}
	if a.Rate < 0 {
		return nil, fmt.Errorf("loadtest: Attack: Rate must not be negative, got %g", a.Rate)
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	pacer := vegeta.ConstantPacer{} // zero: as fast as the workers go
	if a.Rate > 0 {
		// Freq per Per with Per short enough that Freq is an integer
		// close to the rate.
		pacer = vegeta.ConstantPacer{Freq: int(a.Rate*1000 + 0.5), Per: 1000 * time.Second}
		if pacer.Freq == 0 {
			return nil, fmt.Errorf("loadtest: Attack: Rate %g is too low", a.Rate)
		}
	}
	n := uint64(a.Conns)
	// Our own transport (the options below set it up as they would
	// vegeta's), so that the attack's connections can be closed when it
	// ends: vegeta leaves them open and idle, and each attack would add
	// Conns of them, with their goroutines and buffers on both sides, to the
	// process every later measurement runs in. No proxy: loopback only.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: tr}),
		vegeta.Workers(n), vegeta.MaxWorkers(n),
		vegeta.Connections(a.Conns), vegeta.MaxConnections(a.Conns),
		vegeta.KeepAlive(true), vegeta.Timeout(timeout), vegeta.MaxBody(0),
		vegeta.Redirects(vegeta.NoFollow),
		vegeta.LocalAddr(local),
	)
	var next atomic.Uint64
	targets := slices.Clone(a.Targets)
	targeter := func(t *vegeta.Target) error {
		i := next.Add(1) - 1
		t.Method = "GET"
		t.URL = targets[i%uint64(len(targets))]
		return nil
	}
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()

	o := &Outcome{Codes: make(map[int]int)}
	var first, last time.Time
	for res := range atk.Attack(targeter, pacer, a.Duration, "loadtest") {
		o.Requests++
		o.Codes[int(res.Code)]++
		o.Latencies = append(o.Latencies, res.Latency)
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if end := res.Timestamp.Add(res.Latency); end.After(last) {
			last = end
		}
		if o.FirstError == "" && res.Code != 200 && res.Code != 429 && res.Error != "" {
			o.FirstError = res.Error
		}
	}
	slices.Sort(o.Latencies)
	o.Elapsed = last.Sub(first)
	return o, ctx.Err()
}
