// Package redistest starts throwaway redis-server processes for tests: a
// standalone server, a Sentinel, or a three-node Redis Cluster, each on free
// loopback ports in a temporary directory, with nothing kept on disk. Tests
// of other packages that need a real Redis (the middleware's, the examples')
// use it too.
//
// It never touches a server it did not start (in particular not the one on
// port 6379). When /usr/bin/redis-server (or redis-server on PATH) is
// missing, [Require] skips the test with the reason, or fails it when the
// environment variable RATEKEEPER_REQUIRE_REDIS is set (CI sets it).
//
// On Linux every server it starts is killed when the process that started it
// dies, so a test binary killed outright (a timeout, kill -9), which runs no
// cleanup, leaves no server running. Elsewhere such a server outlives it.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// EnvRequire is the environment variable that turns a missing redis-server
// from a skip into a failure.
const EnvRequire = "RATEKEEPER_REQUIRE_REDIS"

// Binary returns the path of redis-server, or an error saying why there is none.
func Binary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	const fallback = "/usr/bin/redis-server"
	if _, err := os.Stat(fallback); err == nil {
		return fallback, nil
	}
	return "", errors.New("redistest: redis-server not found on PATH or at /usr/bin/redis-server")
}

// Require returns the path of redis-server. When there is none it skips tb
// with the reason, or fails it when RATEKEEPER_REQUIRE_REDIS is set.
func Require(tb testing.TB) string {
	tb.Helper()
	p, err := Binary()
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			tb.Fatalf("%v, and %s is set", err, EnvRequire)
		}
		tb.Skipf("skipping: %v (set %s=1 to make this a failure)", err, EnvRequire)
	}
	return p
}

// A Server is one redis-server process started by this package.
type Server struct {
	// Addr is the server's host:port on the loopback interface.
	Addr string
	// Port is the TCP port of Addr.
	Port int

	bin          string
	dir          string
	args         []string
	sentinelConf string // set for a Sentinel

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts a redis-server on a free loopback port with its working
// directory dir, persistence off, a replica's sync started without delay,
// and the extra configuration args (as
// "--name value" pairs). It returns once the server answers PING, having
// checked that the server answering is the process it started (INFO's
// process_id), not another holding the port.
func Start(dir string, args ...string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 { // a free port may be taken between asking and binding
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("redistest: free port: %w", err)
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, bin: bin, dir: dir, args: args}
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// New starts a server in tb.TempDir() and stops it in tb.Cleanup; it skips
// or fails tb as [Require] does when there is no redis-server.
func New(tb testing.TB, args ...string) *Server {
	tb.Helper()
	Require(tb)
	s, err := Start(tb.TempDir(), args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Stop() })
	return s
}

func (s *Server) start() error {
	if s.sentinelConf != "" {
		return s.startProcess([]string{s.sentinelConf, "--sentinel", "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
			"--logfile", filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port))})
	}
	argv := []string{
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "no",
		// A replica's full sync starts at once, not after the default
		// 5 s wait for more replicas to share it.
		"--repl-diskless-sync-delay", "0",
		"--logfile", filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port)),
	}
	argv = append(argv, s.args...)
	return s.startProcess(argv)
}

func (s *Server) startProcess(argv []string) error {
	cmd := exec.Command(s.bin, argv...)
	cmd.Dir = s.dir
	if err := startCmd(cmd); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	// The server answering on the port must be this process: another one
	// may hold the port (taken between freePort and the bind, or after a
	// Stop before a Restart), and then this one exits at start while the
	// other answers PING.
	own := "process_id:" + strconv.Itoa(cmd.Process.Pid)
	exited := false
	up := hangguard.Poll(10*time.Second, 10*time.Millisecond, func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		info, err := s.Do("INFO", "server")
		if err != nil || !hasLine(info, own) {
			return false
		}
		reply, err := s.Do("PING")
		return err == nil && reply == "PONG"
	})
	switch {
	case exited:
		return fmt.Errorf("redistest: redis-server on port %d exited at start (log: %s)", s.Port, s.logTail())
	case !up:
		_ = s.Stop()
		return fmt.Errorf("redistest: redis-server on port %d did not answer PING in 10s", s.Port)
	}
	return nil
}

// hasLine reports whether text (an INFO reply) has the line line.
func hasLine(text, line string) bool {
	for l := range strings.Lines(text) {
		if strings.TrimRight(l, "\r\n") == line {
			return true
		}
	}
	return false
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.Port)))
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return strings.TrimSpace(string(b))
}

// Stop kills the server and waits for it to exit. It is idempotent.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Kill()
	<-done
	return nil
}

// Restart starts the server again on the same port (after [Server.Stop]),
// empty, with the same configuration. It fails when another process holds
// the port (as Start checks, the server answering must be the one it
// started).
func (s *Server) Restart() error {
	_ = s.Stop()
	var err error
	for range 50 { // the port may linger briefly after the kill
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Do sends one command over a fresh connection and returns the reply as
// text (integers in decimal, arrays one element a line). It is for setup
// only; tests use go-redis.
func (s *Server) Do(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(bufio.NewReader(conn))
}

func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("redistest: empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New("redistest: " + line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		parts := make([]string, 0, max(n, 0))
		for range n {
			p, err := readReply(r)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("redistest: unexpected reply %q", line)
}

// A Cluster is a three-master Redis Cluster started by this package.
type Cluster struct {
	// Nodes are the three masters, serving slots 0-5460, 5461-10922 and 10923-16383.
	Nodes [3]*Server
}

// Addrs returns the node addresses, for redis.ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		if n != nil {
			_ = n.Stop()
		}
	}
}

// StartCluster starts three cluster-enabled servers under dir, assigns them
// the slot ranges 0-5460, 5461-10922 and 10923-16383, joins them with
// CLUSTER MEET and returns when every node reports cluster_state:ok.
func StartCluster(dir string) (*Cluster, error) {
	c := &Cluster{}
	ranges := [3][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i := range c.Nodes {
		nd := filepath.Join(dir, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(nd, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		s, err := Start(nd, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes[i] = s
	}
	for i, n := range c.Nodes {
		if _, err := n.Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(ranges[i][0]), strconv.Itoa(ranges[i][1])); err != nil {
			c.Stop()
			return nil, fmt.Errorf("redistest: ADDSLOTSRANGE on %s: %w", n.Addr, err)
		}
	}
	for _, n := range c.Nodes[1:] {
		if _, err := n.Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(c.Nodes[0].Port)); err != nil {
			c.Stop()
			return nil, fmt.Errorf("redistest: CLUSTER MEET: %w", err)
		}
	}
	converged := hangguard.Poll(30*time.Second, 50*time.Millisecond, func() bool {
		for _, n := range c.Nodes {
			info, err := n.Do("CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
				return false
			}
		}
		return true
	})
	if !converged {
		c.Stop()
		return nil, errors.New("redistest: cluster did not reach cluster_state:ok in 30s")
	}
	return c, nil
}

// NewCluster starts a cluster in tb.TempDir() and stops it in tb.Cleanup; it
// skips or fails tb as [Require] does when there is no redis-server.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	Require(tb)
	c, err := StartCluster(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// StartSentinel starts a Redis Sentinel on a free loopback port, with its
// configuration file in dir, monitoring master under the name masterName
// (quorum 1). It returns once the Sentinel answers PING and knows the master.
func StartSentinel(dir, masterName string, master *Server) (*Server, error) {
	return StartSentinelWith(dir, masterName, master, SentinelOptions{})
}

// knowsMaster returns an error unless the Sentinel s gives master's address
// for masterName (a Sentinel that does not know the name answers a null
// array, which Do reads as "").
func knowsMaster(s *Server, masterName string, master *Server) error {
	got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName)
	if err != nil {
		return err
	}
	if want := "127.0.0.1\n" + strconv.Itoa(master.Port); got != want {
		return fmt.Errorf("redistest: the Sentinel on %s gives %q for master %q, want %q", s.Addr, got, masterName, want)
	}
	return nil
}
