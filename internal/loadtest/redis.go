package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvRequireRedis is the environment variable that turns a missing
// redis-server from a skip into a failure (CI sets it).
const EnvRequireRedis = "RATEKEEPER_REQUIRE_REDIS"

// RedisBinary returns the path of redis-server, or an error saying why there
// is none.
func RedisBinary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	const fallback = "/usr/bin/redis-server"
	if _, err := os.Stat(fallback); err == nil {
		return fallback, nil
	}
	return "", errors.New("loadtest: redis-server not found on PATH or at /usr/bin/redis-server")
}

// A Redis is a redis-server process started by [StartRedis].
type Redis struct {
	// Addr is the server's 127.0.0.1:port.
	Addr string

	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts a redis-server on a free loopback port, working in dir,
// with persistence off, and returns once it answers PING. It never uses a
// server it did not start (in particular not one on 6379).
func StartRedis(dir string) (*Redis, error) {
	bin, err := RedisBinary()
	if err != nil {
		return nil, err
	}
	var last error
	for range 5 { // the port may be taken between asking and binding
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("loadtest: free port: %w", err)
		}
		r, err := startRedis(bin, dir, port)
		if err == nil {
			return r, nil
		}
		last = err
	}
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedis(bin, dir string, port int) (*Redis, error) {
	p := strconv.Itoa(port)
	cmd := exec.Command(bin,
		"--port", p, "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--protected-mode", "no", "--logfile", filepath.Join(dir, "redis-"+p+".log"))
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("loadtest: start redis-server: %w", err)
	}
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", p), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.done) }()
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			return nil, fmt.Errorf("loadtest: redis-server on port %d exited at start", port)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return r, nil
		}
		time.Sleep(20 * time.Millisecond) // polling a starting process, not passing test time
	}
	_ = r.Stop()
	return nil, fmt.Errorf("loadtest: redis-server on port %d did not answer PING in 10s", port)
}

// Client returns a new go-redis client for r with a connection pool of size
// pool.
func (r *Redis) Client(pool int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr, PoolSize: pool, MinIdleConns: min(pool, 8)})
}

// Stop kills the server and waits for it to exit. It is idempotent.
func (r *Redis) Stop() error {
	select {
	case <-r.done:
		return nil
	default:
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	return nil
}
