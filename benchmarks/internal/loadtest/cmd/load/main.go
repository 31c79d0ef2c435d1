// Command load runs ratekeeper's load tests — exactness under load, overhead
// against no limiter and httprate, and a key flood — with vegeta against
// servers on 127.0.0.1, and writes the tables as markdown.
//
//	cd benchmarks && go run ./internal/loadtest/cmd/load -out ../bench/load.md
//	cd benchmarks && go run ./internal/loadtest/cmd/load -quick   # a few seconds
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

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	out := fs.String("out", "bench/load.md", "markdown output file (- for stdout only)")
	quick := fs.Bool("quick", false, "run the reduced (CI-sized) version: a few seconds")
	conns := fs.Int("conns", 64, "concurrent connections of every attack")
	limit := fs.Int64("limit", 50, "exactness: limit per window")
	window := fs.Duration("window", 500*time.Millisecond, "exactness: window")
	windows := fs.Int("windows", 10, "exactness: windows per attack")
	factor := fs.Int("factor", 5, "exactness: offered load in multiples of limit/window")
	rounds := fs.Int("rounds", 5, "overhead: rounds")
	maxDur := fs.Duration("max-dur", 2*time.Second, "overhead: length of each max-throughput attack")
	latDur := fs.Duration("lat-dur", 3*time.Second, "overhead: length of each latency attack")
	floodKeys := fs.Int("flood-keys", 1_000_000, "key flood: distinct client IPs")
	floodMax := fs.Int("flood-max", 100_000, "key flood: WithMaxKeys bound")
	noRedis := fs.Bool("no-redis", false, "skip the Redis parts")
	timeout := fs.Duration("timeout", 5*time.Minute, "stop everything after this long")
	cmdline := fs.String("cmdline", "", "the command line to print in the report (default: this go run command)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cmdline == "" {
		*cmdline = strings.TrimSpace("cd benchmarks && go run ./internal/loadtest/cmd/load " + strings.Join(args, " "))
	}
	if *quick {
		*limit, *window, *windows = 20, 200*time.Millisecond, 10
		*rounds, *maxDur, *latDur = 1, 500*time.Millisecond, 500*time.Millisecond
		*floodKeys, *floodMax = 100_000, 10_000
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	rep := &loadtest.Report{
		Command: *cmdline,
		Started: time.Now(),
		Machine: fmt.Sprintf("%s, %s/%s, GOMAXPROCS=%d, %d CPUs.", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU()),
	}
	loadStart := loadavg()
	var redis *loadtest.Redis
	switch {
	case *noRedis:
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

	rep.ExactConfig = loadtest.ExactConfig{Limit: *limit, Window: *window, Windows: *windows, Factor: *factor, Conns: *conns, Redis: redis, Parallel: *quick}
	log.Printf("exactness: %d per %s, %dx for %d windows, %d connections", *limit, *window, *factor, *windows, *conns)
	ex, err := loadtest.RunExactness(ctx, rep.ExactConfig)
	if err != nil {
		return err
	}
	rep.Exact = ex

	rep.OverheadConf = loadtest.OverheadConfig{Conns: *conns, MaxDuration: *maxDur, LatDuration: *latDur, Rounds: *rounds, Redis: redis}
	log.Printf("overhead: %d rounds of %s + %s per scenario", *rounds, *maxDur, *latDur)
	ov, err := loadtest.RunOverhead(ctx, rep.OverheadConf)
	if err != nil {
		return err
	}
	rep.Overhead = ov

	log.Printf("key flood: %d keys into a bound of %d", *floodKeys, *floodMax)
	fl, err := loadtest.RunFlood(ctx, loadtest.FloodConfig{Keys: *floodKeys, MaxKeys: *floodMax, Limit: 100, Window: 100 * time.Millisecond, Windows: 10})
	if err != nil {
		return err
	}
	rep.Flood = &fl
	rep.Took = time.Since(rep.Started)
	rep.Machine += " Load average (1, 5, 15 min) at the start: " + loadStart + "; at the end: " + loadavg() + "."

	if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	if *out != "-" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return err
		}
		f, err := os.Create(*out)
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
		log.Printf("wrote %s", *out)
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
