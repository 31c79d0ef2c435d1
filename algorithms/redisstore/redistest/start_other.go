//go:build !linux

package redistest

import "os/exec"

// startCmd starts cmd. Outside Linux there is no parent-death signal: a
// test process killed outright leaves its servers running.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
