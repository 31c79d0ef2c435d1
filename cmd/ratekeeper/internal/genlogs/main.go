// Command genlogs writes synthetic HTTP access logs for testing
// "ratekeeper replay": the same flags and seed always give the same bytes.
//
// The traffic mixes three kinds of client. Ordinary clients make 70% of
// the requests, spread evenly over the span: n/40 of them (at least 10),
// so about 28 requests each; half of them send a user name with every
// request, the others never; every seventh has an IPv6 address. Four heavy
// clients (scrapers) make 22%, bunched in the last tenth of each minute of
// the span. A credential-stuffing bot makes 8%, posting to /login in
// bursts, one every five minutes of the span or so, each burst under one
// of five user names (user0 to user4) in turn. A share of the lines
// (-malformed) is malformed instead. Rates follow from -n and -span: with
// the defaults a scraper sends about 2 requests a minute, with -n 1000000
// about 900. The sample logs in cmd/ratekeeper/testdata are made by
// "go generate ./cmd/ratekeeper"; the large benchmark input by
//
//	go run ./cmd/ratekeeper/internal/genlogs -n 1000000 -o /tmp/big.log
//
// Usage:
//
//	genlogs [-n lines] [-seed n] [-format combined|common|json] [-start RFC3339]
//	        [-span duration] [-malformed fraction] [-gzip] [-o file]
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/outfile"
)

func main() {
	os.Exit(exitCode(run(os.Args[1:], os.Stdout), os.Stderr))
}

// exitCode returns the exit status for run's error, printing it to stderr:
// 0 for none and for -help (the usage is printed), 2 for the others. A bad
// flag is not printed again: the flag package printed it, with the usage.
func exitCode(err error, stderr io.Writer) int {
	var fe flagError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &fe):
		return 2
	}
	fmt.Fprintln(stderr, "genlogs:", err)
	return 2
}

// A flagError is an error of the command line's flags, reported already by
// the flag package.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

// run writes the log that the flags args describe, to stdout for -o -.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("genlogs", flag.ContinueOnError)
	n := fs.Int("n", 2000, "number of lines")
	seed := fs.Uint64("seed", 1, "random seed")
	format := fs.String("format", "combined", "combined, common or json")
	start := fs.String("start", "2024-03-10T12:00:00Z", "start of the span the requests spread over (RFC 3339)")
	span := fs.Duration("span", time.Hour, "time the requests spread over")
	malformed := fs.Float64("malformed", 0.002, "fraction of malformed lines")
	gz := fs.Bool("gzip", false, "gzip the output")
	out := fs.String("o", "-", "output file; - for standard output")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("no arguments expected, got %q (flags go before them)", fs.Args())
	case *n < 0:
		return fmt.Errorf("-n %d: want 0 or more lines", *n)
	case *span <= 0:
		return fmt.Errorf("-span %s: want a positive duration", *span)
	case *format != "combined" && *format != "common" && *format != "json":
		return fmt.Errorf("-format %q: want combined, common or json", *format)
	case !(*malformed >= 0 && *malformed <= 1):
		return fmt.Errorf("-malformed %g: want a fraction from 0 to 1", *malformed)
	}
	t0, err := time.Parse(time.RFC3339, *start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	g := &gen{rng: rand.New(rand.NewPCG(*seed, *seed^0x5eed)), t0: t0, span: *span, format: *format, malformed: *malformed}
	generate := func(w io.Writer) error {
		var zw *gzip.Writer
		if *gz {
			zw = gzip.NewWriter(w) // no name, no time: reproducible bytes
			w = zw
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := g.write(bw, *n); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if zw != nil {
			return zw.Close()
		}
		return nil
	}
	if *out == "-" {
		return generate(stdout)
	}
	// Whole or not at all: a log cut short by a full disk would read as
	// a shorter one.
	f, err := outfile.New("-o", *out)
	if err != nil {
		return err
	}
	defer f.Discard()
	return f.Write(generate)
}

type gen struct {
	rng       *rand.Rand
	t0        time.Time
	span      time.Duration
	format    string
	malformed float64
}

type request struct {
	t      time.Time
	ip     string
	user   string
	method string
	path   string
	status int
	ua     string
}

var paths = []string{"/", "/search?q=go", "/items/17", "/items/42", "/items/7", "/cart", "/static/app.js", "/static/app.css", "/api/v1/orders", "/about"}

// requests returns n requests in time order.
func (g *gen) requests(n int) []request {
	reqs := make([]request, 0, n)
	// 8% bot logins, 22% heavy clients, the rest ordinary ones.
	nClients := max(10, n/40)
	for i := 0; i < n; i++ {
		var r request
		switch p := g.rng.Float64(); {
		case p < 0.08:
			// Bursts of guesses against one account at a time, every five
			// minutes or so.
			bursts := max(1, int(g.span/(5*time.Minute)))
			b := g.rng.IntN(bursts)
			r = request{ip: "203.0.113.66", user: "user" + strconv.Itoa(b%5), method: "POST", path: "/login", status: 401, ua: "python-requests/2.31"}
			r.t = g.at((float64(b) + 0.05*g.rng.Float64()) / float64(bursts))
		case p < 0.30:
			h := g.rng.IntN(4)
			r = request{ip: fmt.Sprintf("198.51.100.%d", 10+h), user: "-", method: "GET", path: paths[g.rng.IntN(len(paths))], status: 200, ua: "scraper/1.0"}
			// Bunched in the last tenth of each minute; of the span's
			// last minute when it is cut short (all of a span under a
			// minute), so that no request falls after the span.
			m := g.rng.Float64()
			minutes := g.span.Minutes()
			k := float64(int(m * minutes))
			length := min(1, minutes-k) // 1 but in a partial last minute
			r.t = g.at(k/minutes + length*(0.9+0.1*g.rng.Float64())/minutes)
		default:
			c := g.rng.IntN(nClients)
			r = request{ip: g.clientAddr(c), user: "-", method: "GET", path: paths[g.rng.IntN(len(paths))], status: 200, ua: "Mozilla/5.0"}
			if c%2 == 0 {
				r.user = "u" + strconv.Itoa(c)
			}
			if g.rng.IntN(20) == 0 {
				r.method, r.path = "POST", "/login"
			}
			r.t = g.at(g.rng.Float64())
		}
		reqs = append(reqs, r)
	}
	slices.SortStableFunc(reqs, func(a, b request) int { return a.t.Compare(b.t) })
	return reqs
}

// clientAddr returns the address of ordinary client c: an IPv6 one (with
// a random interface ID) for every seventh, an IPv4 one for the others.
// Each client's address (its /64 for IPv6) is its own, and valid, for the
// first 16 million clients (640 million lines).
func (g *gen) clientAddr(c int) string {
	if c%7 == 0 {
		if c <= 0xffff {
			return fmt.Sprintf("2001:db8:%x::%x", c, 1+g.rng.IntN(200))
		}
		// The fourth group holds the rest of c: never 0, unlike above.
		return fmt.Sprintf("2001:db8:%x:%x::%x", c&0xffff, c>>16&0xffff, 1+g.rng.IntN(200))
	}
	const inNet192 = 254 * 250 // 192.0.2.1 to 192.0.255.250
	if c < inNet192 {
		return fmt.Sprintf("192.0.%d.%d", 2+c/250, 1+c%250)
	}
	k := c - inNet192 // in 10.0.0.0/8
	return netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}).String()
}

// at returns the instant a fraction f of the span after its start, to the
// millisecond after it (never before the start, whatever its fraction).
func (g *gen) at(f float64) time.Time {
	return g.t0.Add(time.Duration(f * float64(g.span)).Truncate(time.Millisecond))
}

func (g *gen) write(w *bufio.Writer, n int) error {
	for _, r := range g.requests(n) {
		if g.rng.Float64() < g.malformed {
			bad := []string{"\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xfc\\x03\\x03", "-", "GARBAGE LINE"}[g.rng.IntN(3)]
			fmt.Fprintf(w, "%s - - [%s] \"%s\" 400 0\n", r.ip, r.t.Format("02/Jan/2006:15:04:05 -0700"), bad)
			continue
		}
		var err error
		switch g.format {
		case "json":
			_, err = fmt.Fprintf(w, `{"time":%q,"remote_addr":%q,"method":%q,"path":%q,"status":%d,"user":%q,"user_agent":%q}`+"\n",
				r.t.Format(time.RFC3339Nano), r.ip, r.method, r.path, r.status, userOrEmpty(r.user), r.ua)
		case "common":
			_, err = fmt.Fprintf(w, "%s - %s [%s] \"%s %s HTTP/1.1\" %d %d\n", r.ip, r.user, r.t.Format("02/Jan/2006:15:04:05 -0700"), r.method, r.path, r.status, 200+g.rng.IntN(5000))
		default:
			_, err = fmt.Fprintf(w, "%s - %s [%s] \"%s %s HTTP/1.1\" %d %d \"-\" %q\n", r.ip, r.user, r.t.Format("02/Jan/2006:15:04:05 -0700"), r.method, r.path, r.status, 200+g.rng.IntN(5000), r.ua)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func userOrEmpty(u string) string {
	if u == "-" {
		return ""
	}
	return u
}
