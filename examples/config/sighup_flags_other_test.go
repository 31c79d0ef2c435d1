//go:build !linux

package main

// addChildFlags adds the flags of the example's process that a test
// starts: none but on Linux (see sighup_flags_linux_test.go).
func addChildFlags() {}
