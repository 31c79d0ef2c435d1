// Command load runs ratekeeper's load tests — exactness under load, overhead
// against no limiter and httprate, and a key flood — with vegeta against
// servers on 127.0.0.1, and writes the tables as markdown.
//
//	cd benchmarks && go run ./internal/loadtest/cmd/load -out ../bench/load.md
//	cd benchmarks && go run ./internal/loadtest/cmd/load -quick
//
// In a full run its attacks last 2m58s (4m5s with Redis), and the program
// gives up after -timeout (5 minutes); with -quick, its attacks last 12s
// (17s with Redis). The key flood and building the report add a few
// seconds. Flags given with -quick keep their values.
//
// It lives in the benchmarks module (it needs vegeta and httprate), so it
// runs from the benchmarks directory; scripts/load.sh builds it from there.
// Redis parts start their own redis-server on a free loopback port; without
// redis-server they are skipped (with the reason in the report) unless
// RATEKEEPER_REQUIRE_REDIS is set, which makes that an error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/benchmarks/internal/loadtest"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("load: ")
	if err := run(os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// options are the command's flags.
type options struct {
	out                     string
	quick                   bool
	conns                   int
	limit                   int64
	window                  time.Duration
	windows, factor, rounds int
	maxDur, latDur          time.Duration
	floodKeys, floodMax     int
	noRedis                 bool
	timeout                 time.Duration
	cmdline                 string
}

// quickFlags are the flag values -quick sets, unless given.
var quickFlags = [][2]string{
	{"limit", "20"}, {"window", "200ms"}, {"windows", "10"},
	{"rounds", "1"}, {"max-dur", "500ms"}, {"lat-dur", "500ms"},
	{"flood-keys", "100000"}, {"flood-max", "10000"},
}

// parseFlags parses args into the command's options, with -quick applied.
func parseFlags(args []string, output io.Writer) (*flag.FlagSet, *options, error) {
	o := &options{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.out, "out", "bench/load.md", "markdown output file (- for stdout only)")
	fs.BoolVar(&o.quick, "quick", false, "run the reduced (CI-sized) version: its attacks last 12s (17s with Redis); flags given keep their values")
	fs.IntVar(&o.conns, "conns", 64, "concurrent connections of every attack")
	fs.Int64Var(&o.limit, "limit", 50, "exactness: limit per window")
	fs.DurationVar(&o.window, "window", 500*time.Millisecond, "exactness: window")
	fs.IntVar(&o.windows, "windows", 10, "exactness: windows per attack")
	fs.IntVar(&o.factor, "factor", 5, "exactness: offered load in multiples of limit/window")
	fs.IntVar(&o.rounds, "rounds", 5, "overhead: rounds")
	fs.DurationVar(&o.maxDur, "max-dur", 2*time.Second, "overhead: length of each max-throughput attack")
	fs.DurationVar(&o.latDur, "lat-dur", 3*time.Second, "overhead: length of each latency attack")
	fs.IntVar(&o.floodKeys, "flood-keys", 1_000_000, "key flood: distinct client IPs")
	fs.IntVar(&o.floodMax, "flood-max", 100_000, "key flood: WithMaxKeys bound")
	fs.BoolVar(&o.noRedis, "no-redis", false, "skip the Redis parts")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "stop everything after this long")
	fs.StringVar(&o.cmdline, "cmdline", "", "the command line to print in the report (default: this go run command)")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if o.cmdline == "" {
		o.cmdline = strings.TrimSpace("cd benchmarks && go run ./internal/loadtest/cmd/load " + strings.Join(args, " "))
	}
	if o.quick {
		// The reduced sizes, for the flags not given.
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for _, f := range quickFlags {
			if !given[f[0]] {
				if err := fs.Set(f[0], f[1]); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return fs, o, nil
}

func run(args []string, stdout io.Writer) error {
	_, o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()

	rep := &loadtest.Report{
		Command: o.cmdline,
		Started: time.Now(),
		Machine: fmt.Sprintf("%s, %s/%s, GOMAXPROCS=%d, %d CPUs.", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU()),
	}
	loadStart := loadavg()
	var redis *loadtest.Redis
	switch {
	case o.noRedis:
		rep.RedisSkipped = "-no-redis given"
	default:
		if _, err := loadtest.RedisBinary(); err != nil {
			if os.Getenv(loadtest.EnvRequireRedis) != "" {
				return fmt.Errorf("%v, and %s is set", err, loadtest.EnvRequireRedis)
			}
			rep.RedisSkipped = err.Error()
			log.Printf("skipping the Redis parts: %v", err)
			break
		}
		dir, err := os.MkdirTemp("", "loadtest-redis-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if redis, err = loadtest.StartRedis(dir); err != nil {
			return err
		}
		defer redis.Stop()
		log.Printf("redis-server on %s", redis.Addr)
	}

	rep.ExactConfig = loadtest.ExactConfig{Limit: o.limit, Window: o.window, Windows: o.windows, Factor: o.factor, Conns: o.conns, Redis: redis, Parallel: o.quick}
	log.Printf("exactness: %d per %s, %dx for %d windows, %d connections", o.limit, o.window, o.factor, o.windows, o.conns)
	ex, err := loadtest.RunExactness(ctx, rep.ExactConfig)
	if err != nil {
		return err
	}
	rep.Exact = ex

	rep.OverheadConf = loadtest.OverheadConfig{Conns: o.conns, MaxDuration: o.maxDur, LatDuration: o.latDur, Rounds: o.rounds, Redis: redis}
	log.Printf("overhead: %d rounds of %s + %s per scenario", o.rounds, o.maxDur, o.latDur)
	ov, err := loadtest.RunOverhead(ctx, rep.OverheadConf)
	if err != nil {
		return err
	}
	rep.Overhead = ov

	log.Printf("key flood: %d keys into a bound of %d", o.floodKeys, o.floodMax)
	fl, err := loadtest.RunFlood(ctx, loadtest.FloodConfig{Keys: o.floodKeys, MaxKeys: o.floodMax, Limit: 100, Window: 100 * time.Millisecond, Windows: 10})
	if err != nil {
		return err
	}
	rep.Flood = &fl
	rep.Took = time.Since(rep.Started)
	rep.Machine += " Load average (1, 5, 15 min) at the start: " + loadStart + "; at the end: " + loadavg() + "."

	if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	if o.out != "-" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		if err := rep.WriteMarkdown(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		log.Printf("wrote %s", o.out)
	}
	return nil
}

// loadavg returns the host's load averages from /proc/loadavg, or "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
