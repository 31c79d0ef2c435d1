package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

func TestMain(m *testing.M) {
	apptest.Main(main)
	os.Exit(m.Run())
}

// TestRunBadCounts: a count that is not positive is refused, naming the
// flag and the value given.
func TestRunBadCounts(t *testing.T) {
	for _, tc := range []struct {
		n, workers int
		want       string
	}{
		{0, 1, "-n 0"},
		{-3, 1, "-n -3"},
		{1, 0, "-workers 0"},
	} {
		err := run(&strings.Builder{}, algotest.NewClock(time.Time{}), tc.n, tc.workers, time.Minute)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(n=%d, workers=%d) = %v, want an error naming %q", tc.n, tc.workers, err, tc.want)
		}
	}
}

// TestMainArguments: "go run ./examples/client 50" does not make 20 calls
// as if nothing had been said: an argument is a usage error (exit 2)
// that names it and says the flags.
func TestMainArguments(t *testing.T) {
	cmd := apptest.Command(t, "50")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("with an argument: %v, want exit status 2; output:\n%s", err, out.String())
	}
	for _, want := range []string{`"50"`, "-n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("with an argument: the output does not say %s:\n%s", want, out.String())
		}
	}
}
