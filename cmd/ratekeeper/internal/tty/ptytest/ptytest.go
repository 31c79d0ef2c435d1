// Package ptytest opens pseudo-terminals for tests: a terminal that a
// command reads as its standard input, and the other end, which types
// into it. Only Linux has them here; elsewhere [Open] skips the test.
package ptytest
