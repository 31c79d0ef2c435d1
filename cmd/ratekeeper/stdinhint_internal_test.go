package main

import "testing"

// TestStdinHintEOFKeys: the terminal hint says the keys that end typed
// input on the system it runs on: Ctrl-Z then Enter in a Windows console
// (where Ctrl-D is typed as a character), Ctrl-D elsewhere. It said
// Ctrl-D on Windows too.
func TestStdinHintEOFKeys(t *testing.T) {
	for _, tc := range []struct{ goos, want string }{
		{"linux", "ratekeeper check: reading the configuration from standard input (a terminal): paste it, end with Ctrl-D; or pipe a file"},
		{"darwin", "ratekeeper replay: reading the log from standard input (a terminal): paste lines, end with Ctrl-D; or pipe a file"},
		{"windows", "ratekeeper replay: reading the log from standard input (a terminal): paste lines, end with Ctrl-Z then Enter; or pipe a file"},
	} {
		cmd, what, paste := "check", "the configuration", "it"
		if tc.goos != "linux" {
			cmd, what, paste = "replay", "the log", "lines"
		}
		if got := terminalHint(tc.goos, cmd, what, paste); got != tc.want {
			t.Errorf("terminalHint(%q, %q, ...) = %q, want %q", tc.goos, cmd, got, tc.want)
		}
	}
}
