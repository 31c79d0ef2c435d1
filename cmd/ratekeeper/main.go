// Command ratekeeper shows, checks and tunes ratekeeper rate limits.
//
// Usage:
//
//	ratekeeper demo [--svg FILE] [--headers PROFILE]
//	ratekeeper check FILE
//	ratekeeper replay --config FILE [flags] LOG...
//
// demo runs a scripted scenario offline in under a second: a chi server with
// the middleware, driven by a real HTTP client in simulated time, showing
// responses and their rate-limit headers, a login throttled per IP and
// user, and the requests each algorithm admits in the worked examples of
// the articles ratekeeper grew from, the seed scenarios:
//
//	boundary burst: 100/min, 100 at 59s + 100 at 61s (admitted of 200)
//	bunched at start: 5/30s, 5 at 0.5s, then 5 at 33s (admitted at 33s)
//	bunched at end: 5/30s, 5 at 29.5s, then 5 at 50s (admitted at 50s)
//	seed 004 buckets: 5/5s, 5 at 4s + 5 at 6s (admitted of 10)
//
// It writes an SVG chart of admitted and rejected requests per algorithm
// and prints its path.
//
// check validates a configuration file (YAML or JSON; see
// policy.Config) and prints the effective policies, and advice on valid
// but risky choices.
//
// replay reads access logs (Common or Combined Log Format, also with a
// leading X-Forwarded-For list; JSON lines, with the field names of nginx,
// Caddy, Traefik and others or those the --json-* flags give; or W3C
// Extended Log File Format as IIS and CloudFront write it; also as a
// container runtime or syslog keeps them, or docker compose logs prints
// them; gzip- or bzip2-compressed or
// not), merged in time order, and replays every request
// through the configured policies at the time the log gives it, with an
// in-memory store on a simulated clock. It reports per policy the requests, those that would
// have been rejected, the keys rejected most, the percentiles of requests
// per key per window, and suggested limits (P95 × 1.2 to 1.5, P99 × 2)
// with the share each would have rejected. --compare adds every algorithm
// but leaky_queue (a shaper: it delays rather than rejects), --svg FILE a
// chart, --json the report as JSON.
//
// Run "ratekeeper COMMAND --help" for the flags of each command.
//
// # Exit status
//
//	0  success: the configuration is valid; the replay rejected nothing
//	1  findings: check found problems in the configuration; replay would
//	   have rejected requests
//	2  usage or input error: bad flags, unreadable files, an invalid
//	   configuration given to replay, a configuration larger than
//	   256 KiB or an access log given for one, logs with no parseable
//	   line, a log given twice, output that cannot be written
//
// Malformed lines, lines far out of time order and a compressed log that ends
// early (truncated) do not stop a replay: the report counts them or warns.
// A line stamped far ahead of the lines after it in its own log (a wrong
// clock) is left out, with a warning naming it, so that the later lines of
// its log and of the others are replayed in time order, not late.
//
// # Output files
//
// The files --svg and --cpuprofile name are written whole, once the run
// has succeeded, to a temporary file beside them renamed over them: a run
// that fails or is interrupted (Ctrl-C, SIGTERM, SIGHUP) leaves the file
// as it was, and nothing beside it. A file its user may not write is
// refused, as by a shell's redirection; one with other hard links, of
// another owner, in a directory its user may not write, or bind-mounted
// (a container's single-file volume) is written in place (the output
// copied into it, signals held meanwhile; a copy that fails part way, on
// a full disk, leaves the file incomplete, and the error says so). A
// symlink is followed, as by a shell's redirection: the file it names is
// written, the link kept.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/internal/editdist"
)

// Exit codes.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `ratekeeper shows, checks and tunes ratekeeper rate limits.

Usage:
  ratekeeper demo [--svg FILE] [--headers PROFILE]  run the offline demo
  ratekeeper check FILE                             validate a configuration
  ratekeeper replay --config FILE [flags] LOG...    replay access logs

Run "ratekeeper COMMAND --help" (or "ratekeeper help COMMAND") for the
flags of a command.
Exit status: 0 ok; 1 findings (check: an invalid configuration; replay:
requests that would have been rejected); 2 usage or input error (for
replay, an invalid configuration too).
`

// run executes the command line args and returns the exit status. Output
// that cannot be written (on a full disk, /dev/full) is an error, exit
// status 2, not a success with nothing shown. (A standard output closed
// when the command starts, "ratekeeper check FILE >&-", is no such error:
// the Go runtime opens /dev/null in its place. A pipe whose reader has
// gone, "| head -1", ends the command by SIGPIPE, as any.)
func run(args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	code := runCommand(args, out, stderr)
	if out.err != nil && code != exitUsage { // exitUsage: reported already
		fmt.Fprintf(stderr, "ratekeeper: writing the output: %v\n", out.err)
		return exitUsage
	}
	return code
}

// An outWriter is standard output that remembers its first write error,
// and writes nothing more after it.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "replay":
		return runReplay(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			// help COMMAND: that command's own help.
			switch args[1] {
			case "demo", "check", "replay":
				return runCommand([]string{args[1], "--help"}, stdout, stderr)
			case "help", "-h", "-help", "--help":
				// help help: help's own help is the general one.
				fmt.Fprint(stdout, usage)
				return exitOK
			}
			fmt.Fprintf(stderr, "ratekeeper help: %s\n\n%s", unknownCommand(args[1:]), usage)
			return exitUsage
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "ratekeeper: %s\n\n%s", unknownCommand(args), usage)
	return exitUsage
}

// commands are the commands of ratekeeper, for the guesses of
// unknownCommand.
var commands = []string{"demo", "check", "replay", "help"}

// unknownCommand says that args[0] is no command: with the command it
// most likely misspells ("chek": did you mean "check"?), or, for a flag,
// that flags go after the command.
func unknownCommand(args []string) string {
	name := args[0]
	if strings.HasPrefix(name, "-") && len(name) > 1 {
		for _, a := range args[1:] {
			if slices.Contains(commands, a) {
				return fmt.Sprintf("unknown command %q: flags go after the command (ratekeeper %s %s ...)", name, a, name)
			}
		}
		// No command named: the flag may be none of any (--version).
		return fmt.Sprintf("unknown command %q: a command comes first (demo, check or replay), then its flags", name)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if c := closest(name, commands); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	return msg
}

// closest returns the name of names that s most likely misspells, in
// another case, with '_' for '-', an edit or two away (one for a short
// name; a swap of neighbours counting as one), or a prefix of it of three
// letters or more; "" when none is.
func closest(s string, names []string) string {
	fold := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	s = fold(s)
	best, bestDist := "", 3
	for _, n := range names {
		limit := 1
		if len(n) > 4 {
			limit = 2
		}
		d := editdist.Distance(s, fold(n))
		if len(s) >= 3 && strings.HasPrefix(fold(n), s) {
			d = min(d, limit)
		}
		if d <= limit && d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// parseFlags parses args with fs, allowing flags after positional
// arguments, up to a "--", after which every argument is positional; it
// returns the positional arguments. The status is -1 to go on, or the
// exit status (0 after --help).
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, int) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, exitOK
		}
	}
	// The flag package prints a bad flag's error, then the whole help:
	// the error is reported here instead, first and short.
	all := args
	stderr, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(stderr); fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK
			}
			fs.SetOutput(stderr)
			fs.Usage = usage
			usageError(fs, stderr, explain(fs, err, all))
			return nil, exitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// fs stopped at a "--" it consumed (not at a positional argument):
		// the rest are all positional.
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if msg := flagGivenTwice(fs, all); msg != "" {
		fs.SetOutput(stderr)
		fs.Usage = usage
		usageError(fs, stderr, msg)
		return nil, exitUsage
	}
	return pos, -1
}

// A repeatable flag.Value collects a flag given more than once (--route).
type repeatable interface{ repeatable() }

// flagGivenTwice returns why the command line args of fs, parsed, give a
// flag that takes one value two different ones (--config a.yaml --config
// b.yaml: a user who meant both would have half the policies, and the
// flag package keeps the last in silence), or "". A bool flag may be
// given again (--quiet=false after --quiet set in an alias), and so may a
// repeatable one. It reads args as the flag package does.
func flagGivenTwice(fs *flag.FlagSet, args []string) string {
	first := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue // a positional argument
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if isBoolFlag(f) {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if _, ok := f.Value.(repeatable); ok {
			continue
		}
		if v, ok := first[name]; ok && v != value {
			return fmt.Sprintf("--%s given twice (%s, then %s); it takes one", name, quote.IfNeeded(v), quote.IfNeeded(value))
		}
		first[name] = value
	}
	return ""
}

// isBoolFlag reports whether f is a boolean flag, which the flag package
// sets without a value (--quiet) and takes a value only after "="
// (--quiet=false).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// reportError reports the error err of the command cmd on stderr: its
// first line, and each further line that is an error of its own (a joined
// error: every problem of a configuration), as "ratekeeper CMD: ...",
// without the prefixes naming the packages the error passed through
// (policy, replay, logparse), which say nothing to a user; the other
// lines (the samples under "no parseable line") as they are.
func reportError(stderr io.Writer, cmd string, err error) {
	for i, line := range strings.Split(err.Error(), "\n") {
		rest, own := trimPackages(line)
		if i == 0 || own {
			line = "ratekeeper " + cmd + ": " + rest
		}
		fmt.Fprintln(stderr, replay.EscapeControls(line))
	}
}

// quotePath returns err, an error of the os package naming a file (open
// NAME: no such file or directory), with the file's name written as
// quote.IfNeeded writes it: a name holding a newline would add a line of
// its own to the error (reportError writes each line as one), an escape
// (ESC) reach the terminal. Another error is returned as it is.
func quotePath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return &fs.PathError{Op: pe.Op, Path: quote.IfNeeded(pe.Path), Err: pe.Err}
	}
	return err
}

// trimPackages returns line without the package names it starts with
// ("replay: policy: "), and whether there was one.
func trimPackages(line string) (string, bool) {
	found := false
	for {
		trimmed := false
		for _, p := range []string{"policy: ", "replay: ", "logparse: "} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				line, trimmed, found = rest, true, true
			}
		}
		if !trimmed {
			return line, found
		}
	}
}

// usageError reports a usage error of the command of fs on stderr: the
// problem msg first, then the usage line of the command's help and where
// to read all of it (replay's help is over 70 lines: printed after the
// error, it scrolled the error out of sight).
func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) {
	var help strings.Builder
	out := fs.Output()
	fs.SetOutput(&help)
	fs.Usage()
	fs.SetOutput(out)
	line, _, _ := strings.Cut(help.String(), "\n")
	fmt.Fprintf(stderr, "ratekeeper %s: %s\n%s\nRun \"ratekeeper %s --help\" for more.\n", fs.Name(), msg, line, fs.Name())
}

// explain returns the flag package's error err for the command line args
// of fs in the words of the help: flags named with two dashes, as the
// help and the usage lines spell them (the flag package writes one:
// "flag needs an argument: -config"), a bad value's "parse error"
// (--reorder abc) replaced by what the flag wants, and for a flag it does
// not know, the flag as typed and the one it most likely misspells.
func explain(fs *flag.FlagSet, err error, args []string) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + quote.IfNeeded(typedFlag(args, name))
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if c := closest(name, names); c != "" {
			msg += "; did you mean --" + c + "?"
		}
		return msg
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok && fs.Lookup(name) != nil {
		msg = "--" + name + " needs an argument"
		if f := fs.Lookup(name); strings.Contains(f.Usage, "`") {
			v, _ := flag.UnquoteUsage(f)
			msg += " (" + v + ")"
		}
		return msg
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		msg = "bad flag syntax: " + quote.IfNeeded(arg)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		c := ""
		if name != "" {
			c = closest(name, names)
		}
		// A boolean flag takes no separate value: "--quiet false" is
		// --quiet and a positional argument "false".
		if c != "" && isBoolFlag(fs.Lookup(c)) {
			msg += " (a boolean flag is --NAME or --NAME=true|false)"
		} else {
			msg += " (a flag is --NAME, --NAME VALUE or --NAME=VALUE)"
		}
		if c != "" {
			msg += "; did you mean --" + c + "?"
		}
		return msg
	}
	if m := badValue.FindStringSubmatch(msg); m != nil && fs.Lookup(m[3]) != nil {
		return "invalid value " + m[2] + " for --" + m[3] + ": " + want(fs.Lookup(m[3]), m[1] != "", m[4])
	}
	return twoDashes(fs, msg)
}

// badValue matches the flag package's errors for a bad value: "invalid
// value "abc" for flag -reorder: parse error", "invalid boolean value
// "maybe" for -quiet: parse error"; the submatches are "boolean " or "",
// the quoted value, the flag's name and the reason.
var badValue = regexp.MustCompile(`(?s)^invalid (boolean )?value (".*") for (?:flag )?-([\w.-]+): (.*)$`)

// want returns what the flag f wants, for the reason given by the flag
// package for a bad value (a bool's when isBool): for a "parse error" of
// a duration, a number or a bool, the kind of value it takes; the reason
// as it is otherwise (a flag.Value's own: "want NAME=FIELD").
func want(f *flag.Flag, isBool bool, reason string) string {
	if isBool {
		return "want true or false"
	}
	if reason != "parse error" && reason != "value out of range" {
		return reason
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return reason
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration such as 30s, 2m or 1h"
	case int, int64, uint, uint64:
		if reason == "value out of range" {
			return "too large a number"
		}
		return "want a whole number"
	case float64:
		return "want a number"
	case bool:
		return "want true or false"
	}
	return reason
}

// twoDashes returns msg with each flag of fs that it names with one dash
// ("-config") named with two.
func twoDashes(fs *flag.FlagSet, msg string) string {
	return oneDashFlag.ReplaceAllStringFunc(msg, func(m string) string {
		i := strings.IndexByte(m, '-')
		if fs.Lookup(m[i+1:]) == nil {
			return m
		}
		return m[:i] + "-" + m[i:]
	})
}

// oneDashFlag matches a word of msg that is a dash and a name, after a
// start or a character that is no dash, letter or digit.
var oneDashFlag = regexp.MustCompile(`(^|[^-\w])-[a-z][\w.-]*`)

// typedFlag returns the flag name as args give it, with its dashes
// ("--confg" where the flag package says "-confg").
func typedFlag(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if n, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "="); n == name {
			typed, _, _ := strings.Cut(a, "=")
			return typed
		}
	}
	return "-" + name
}

// isHelpFlag reports whether the argument a asks for help as the flag
// package reads it: -h or -help, with one dash or two, with a value or not
// (--help=false too).
func isHelpFlag(a string) bool {
	if !strings.HasPrefix(a, "-") {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	return name == "h" || name == "help"
}

// newFlagSet returns a FlagSet whose Usage prints the command's help: the
// text head, then the flags. parseFlags prints it on standard output for
// --help, and reports a usage error on stderr with the first line of head
// (see usageError).
func newFlagSet(name, head string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprint(out, head)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags { // no heading over an empty list
			fmt.Fprintln(out, "\nFlags:")
			printFlags(fs, out)
		}
	}
	return fs
}

// printFlags writes the flags of fs to out as fs.PrintDefaults does, each
// named with two dashes, as the usage lines and the errors name them.
func printFlags(fs *flag.FlagSet, out io.Writer) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	lines := strings.SplitAfter(b.String(), "\n")
	for i, line := range lines {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			lines[i] = "  --" + rest
		}
	}
	fmt.Fprint(out, strings.Join(lines, ""))
}
