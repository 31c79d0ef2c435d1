//go:build linux

package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// orphanChildEnv makes the test binary, run again by
// TestServerDiesWithItsProcess, start a server and wait to be killed.
const orphanChildEnv = "REDISTEST_ORPHAN_CHILD"

// A test process killed outright (a CI timeout, a kill -9, go test's own
// -timeout) cannot run its cleanups; the servers it started must not outlive
// it. The test kills a process of its own binary that started a server, and
// sees the server go too.
func TestServerDiesWithItsProcess(t *testing.T) {
	if os.Getenv(orphanChildEnv) != "" {
		orphanChild()
		return
	}
	Require(t)
	child := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsProcess$", "-test.count=1")
	child.Env = append(os.Environ(), orphanChildEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := child.StdinPipe() // held open: the child waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var addr, dir string
	var pid int
	if _, err := fmt.Fscan(bufio.NewReader(out), &addr, &pid, &dir); err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("reading the child's server: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL) // in case it survived
		_ = os.RemoveAll(dir)
	})
	probe := &Server{Addr: addr}
	if reply, err := probe.Do("PING"); err != nil || reply != "PONG" {
		t.Fatalf("the child's server at %s: PING = %q, %v", addr, reply, err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	// The server is gone once it refuses connections. Wait for that, as
	// long as a loaded machine may need to deliver the signal.
	gone := hangguard.Poll(30*time.Second, 10*time.Millisecond, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return errors.Is(err, syscall.ECONNREFUSED)
	})
	if !gone {
		t.Fatalf("redis-server (pid %d, %s) still accepts connections 30s after the process that started it was killed", pid, addr)
	}
}

// orphanChild starts a server, prints its address, pid and directory, and
// blocks until the parent kills the process.
func orphanChild() {
	dir, err := os.MkdirTemp("", "redistest-orphan-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	fmt.Println(s.Addr, strconv.Itoa(pid), dir)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until killed
	_ = s.Stop()
	os.Exit(0)
}
