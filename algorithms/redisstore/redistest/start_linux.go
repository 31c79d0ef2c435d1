//go:build linux

package redistest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux a server is started with a parent-death signal (SIGKILL), so a
// test process killed outright, which runs no cleanup, takes its servers
// with it instead of leaving them running. The kernel sends the signal when
// the thread that started the process exits, not the process, so every
// server is started from one goroutine locked to its thread for the life of
// the process (see golang.org/issue/27505).
var (
	starterOnce sync.Once
	starts      chan startRequest
)

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startCmd starts cmd so that it is killed when this process dies.
func startCmd(cmd *exec.Cmd) error {
	starterOnce.Do(func() {
		starts = make(chan startRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range starts {
				r.done <- r.cmd.Start()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error, 1)
	starts <- startRequest{cmd, done}
	return <-done
}
