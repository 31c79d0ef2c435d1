package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/chart"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/outfile"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/policy"
)

const replayHead = `Usage: ratekeeper replay --config FILE [flags] LOG...

Replay reads access logs and runs every request through the configured
policies at the time the log gives it (an in-memory store on a simulated
clock), then reports per policy: requests, would-be rejections, the keys
rejected most, requests per key per window (P50/P95/P99/max), and suggested
limits (P95 x 1.2 to 1.5, P99 x 2) with the share each would have rejected.

Logs are Common or Combined Log Format or JSON lines (one object per line),
told apart line by line, or W3C Extended Log File Format (IIS, CloudFront),
recognised by its #Fields directive; any of them as a container runtime
keeps it (Docker's json-file, the CRI format of Kubernetes' /var/log/pods)
is read through its envelope, split lines joined, as docker compose logs
prints it after the container's name ("nginx-1  | ") or docker logs -t
after the time it received it, and as syslog keeps it (nginx's
access_log syslog:, a file of rsyslog or syslog-ng, journalctl's output)
after the syslog header ("Mar 10 12:00:00 web1 nginx: "); gzip and bzip2
are recognised by their magic bytes (zstd, xz, zip and tar archives are
refused: decompress or extract them first), and UTF-16 (as Windows
PowerShell's > saves text) by its byte order mark; "-" is standard input,
named "stdin" in the report (as by check).
Several logs (rotated files, or the logs of several servers) are merged
into one replay in time order. Lines a little out of time order (servers
write a line when the request ends) are replayed in time order
(--reorder); lines further out are replayed late and counted, a run of
them further behind (logs joined end to end: cat a.log b.log) apart, as a
log of its own: name each log on the command line instead, to have them
merged. A line stamped far ahead of the lines after it in its own log (by
more than the reorder window, a minute with --reorder 0, for most of the
next 8 lines: a wrong clock, a corrupt line) is left out, with a warning
that counts such lines and names the first: replayed, it would make the
later lines of its log and of the others late. Malformed lines are
counted and sampled, not fatal; a compressed log that ends early
(truncated) is replayed up to where it ends, with a warning. The replay
keeps each policy's decisions for its trials, 16 to 32 bytes a request,
and every key: 100 million requests under three policies take some 5 to
10 GB; replay fewer logs at a time if memory is short.
In the Common Log Format the authenticated user becomes the request's user
(key part "user"); the Combined format adds Referer and User-Agent headers.
Its timestamps have whole seconds: the requests of one second are replayed
at the same instant (JSON lines may carry finer times).
A Common Log Format line whose first field is an X-Forwarded-For list
("203.0.113.7, 10.0.0.2", as Apache logs %{X-Forwarded-For}i behind a proxy)
has that header, and the list's last entry as the connecting address:
trusted_proxies or trusted_hops then choose the client as the middleware
would. A single address there is both the connecting address and that
header with one entry (behind one proxy the header holds just the
client), so that trusted_hops: 1 finds it. W3C logs give cs-username as the
user, and cs(Header) fields and an X-Forwarded-For field as headers (IIS's
'+' for a space undone in the user, User-Agent, Cookie, Forwarded and
X-Forwarded-For).

The percentiles count key-windows (each window in which a key made
requests, once): a client busy in many windows, such as one guessing
passwords for an hour, weighs as much as many clients, and the suggested
limits make room for it (a note says so when one key of several holds
most of a policy's rejections). Before raising a limit to one, read the
keys rejected most (a key of a fallback: list shown as "(fallback 1) KEY")
and the busiest window of each key, the percentiles over keys.

A policy with count: failed or succeeded counts a request or not by its
logged status. A line without a status, or with 429 (most likely the
answer of the rate limiter in production, not of the handler, whose status
is then unknown), counts under either.

Exit status: 0 nothing rejected, 1 some requests would have been rejected,
2 usage or input error (an invalid configuration among them).
`

// headerFlags collects --json-header NAME=FIELD, by canonical header
// name: a header named twice, in any case, is refused (its two fields
// would give it two values, in the order of a map).
type headerFlags map[string]string

func (h headerFlags) String() string { return fmt.Sprint(map[string]string(h)) }
func (h headerFlags) repeatable()    {}

func (h headerFlags) Set(v string) error {
	name, field, ok := strings.Cut(v, "=")
	if !ok || name == "" || field == "" {
		return errors.New("want NAME=FIELD")
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("%q is not a header name", name)
	}
	name = textproto.CanonicalMIMEHeaderKey(name)
	if _, twice := h[name]; twice {
		return fmt.Errorf("header %s given twice", name)
	}
	h[name] = field
	return nil
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
func (l *listFlag) repeatable()        {}

type replayFlags struct {
	config, format, svg string
	router              string
	cpuprofile          string
	compare, quiet      bool
	asJSON              bool
	top                 int
	reorder             time.Duration
	routes              listFlag
	json                logparse.JSONFields
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", replayHead, stderr)
	var f replayFlags
	f.json.Headers = map[string]string{}
	fs.StringVar(&f.config, "config", "", "configuration `FILE` (YAML or JSON; required; \"-\" is standard input, named \"stdin\")")
	fs.StringVar(&f.format, "format", "auto", "log format: auto, clf (Common/Combined), json or w3c (W3C extended: IIS, CloudFront)")
	fs.BoolVar(&f.compare, "compare", false, "also replay each policy's traffic alone under every algorithm but leaky_queue (a shaper: it delays, not rejects)")
	fs.StringVar(&f.svg, "svg", "", "write a chart of admitted and rejected requests over time to `FILE`")
	fs.BoolVar(&f.asJSON, "json", false, "write the report as JSON instead of text")
	fs.IntVar(&f.top, "top", 5, "most-rejected keys reported per policy")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on standard error")
	fs.DurationVar(&f.reorder, "reorder", time.Minute, "replay lines up to `DURATION` out of time order in time order (servers log a request when it ends); the lines of that span are held in memory, "+plural.Count(replay.DefaultMaxHeld, "line")+" at most (past that the oldest are replayed early, and the report says so); 0 replays them as logged")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the replay to `FILE` (for tuning)")
	fs.StringVar(&f.router, "router", replay.RouterAuto, "the application's router, whose routing of the route patterns the replay reproduces: servemux, chi, or auto (a ServeMux when every pattern is one, else chi); they differ on patterns both take: \"/\" is every path under a ServeMux and the root alone under chi, \"/docs/\" a subtree or one path")
	fs.Var(&f.routes, "route", "route `PATTERN` of the application (repeatable), e.g. /users/{id}, for route keys; with routes known (these and the configuration's), a request none matches is keyed \"(none)\", as by the middleware's pattern function")
	fs.StringVar(&f.json.Time, "json-time", "", "JSON field of the timestamp (RFC 3339, also with a space for the T or no zone for UTC, the Common Log Format's, or Unix s/ms/µs/ns; default: "+defaults(logparse.DefaultJSONFields.Time)+")")
	fs.StringVar(&f.json.Addr, "json-ip", "", "JSON field of the client address (default: "+defaults(logparse.DefaultJSONFields.Addr)+")")
	fs.StringVar(&f.json.Method, "json-method", "", "JSON field of the method (default: "+defaults(logparse.DefaultJSONFields.Method)+")")
	fs.StringVar(&f.json.Path, "json-path", "", "JSON field of the request path, or of the request line \"POST /login HTTP/1.1\", which gives the method too (default: "+defaults(logparse.DefaultJSONFields.Path)+", else the request line in "+defaults(logparse.DefaultJSONFields.Request)+")")
	fs.StringVar(&f.json.User, "json-user", "", "JSON field of the user, for the key part user (default: "+defaults(logparse.DefaultJSONFields.User)+")")
	fs.StringVar(&f.json.Status, "json-status", "", "JSON field of the response status, for count: failed or succeeded (default: "+defaults(logparse.DefaultJSONFields.Status)+")")
	fs.Var(headerFlags(f.json.Headers), "json-header", "request header from a JSON field, `NAME=FIELD` (repeatable; a dotted FIELD reaches into nested objects, a list of values is joined with \", \"), for header: key parts (User-Agent defaults to "+defaults(logparse.DefaultJSONFields.UserAgent)+"; Referer to "+defaults(logparse.DefaultJSONFields.Referer)+"; X-Forwarded-For, which trusted proxies choose the client from, to "+defaults(logparse.DefaultJSONFields.ForwardedFor)+")")
	logs, code := parseFlags(fs, args, stdout)
	if code >= 0 {
		return code
	}
	switch f.format = strings.ToLower(f.format); f.format {
	case "auto", "clf", "json", "w3c":
	default:
		fmt.Fprintf(stderr, "ratekeeper replay: --format: unknown format %q; want auto, clf, json or w3c\n", f.format)
		return exitUsage
	}
	switch f.router = strings.ToLower(f.router); f.router {
	case replay.RouterAuto, replay.RouterServeMux, replay.RouterChi:
	default:
		fmt.Fprintf(stderr, "ratekeeper replay: --router: unknown router %q; want auto, servemux or chi\n", f.router)
		return exitUsage
	}
	if msg := contradictions(fs, f.format); msg != "" {
		usageError(fs, stderr, msg)
		return exitUsage
	}
	if f.config == "" || len(logs) == 0 {
		usageError(fs, stderr, "want --config FILE and at least one LOG")
		return exitUsage
	}
	if f.config == "-" && slices.Contains(logs, "-") {
		fmt.Fprintln(stderr, "ratekeeper replay: --config - and the log - both name standard input, which can be read once")
		return exitUsage
	}
	for _, l := range logs {
		if sameInput(f.config, l) {
			why := ": a configuration is no log"
			if readOnce(f.config) || readOnce(l) {
				why = " (standard input can be read once)"
			}
			fmt.Fprintf(stderr, "ratekeeper replay: --config %s and the log %s are the same file%s\n", quote.IfNeeded(f.config), quote.IfNeeded(l), why)
			return exitUsage
		}
	}
	if twice := givenTwice(logs); twice != "" {
		why := "its requests would count twice"
		if readOnce(twice) {
			why += "; standard input can be read once"
		}
		fmt.Fprintf(stderr, "ratekeeper replay: %s given twice (%s)\n", quote.IfNeeded(twice), why)
		return exitUsage
	}
	if msg := outputIsInput(&f, logs); msg != "" {
		fmt.Fprintf(stderr, "ratekeeper replay: %s\n", msg)
		return exitUsage
	}
	if f.reorder < 0 {
		fmt.Fprintln(stderr, "ratekeeper replay: --reorder must not be negative")
		return exitUsage
	}
	if f.top < 0 {
		fmt.Fprintln(stderr, "ratekeeper replay: --top must not be negative")
		return exitUsage
	}
	if f.config == "-" {
		hintTerminal(stderr, "replay", checkStdin, "the configuration", "it")
	}
	cfg, err := loadConfig(f.config)
	if err != nil {
		reportError(stderr, "replay", err)
		return exitUsage
	}
	var prof *cpuProfile
	if f.cpuprofile != "" {
		// Kept in memory and written once the replay has succeeded.
		if prof, err = startProfile(f.cpuprofile); err != nil {
			reportError(stderr, "replay", err)
			return exitUsage
		}
		defer prof.stop()
	}
	var svg *outfile.File
	if f.svg != "" {
		// Checked before the replay, so that a path that cannot be
		// written fails at once; written (and renamed over the path) after.
		if svg, err = outfile.New("--svg", f.svg); err != nil {
			reportError(stderr, "replay", err)
			return exitUsage
		}
		defer svg.Discard()
	}
	if slices.Contains(logs, "-") {
		hintTerminal(stderr, "replay", os.Stdin, "the log", "lines")
	}
	rep, in, err := replayLogs(cfg, logs, &f, stderr)
	if err != nil {
		if flag := boolValueFlag(fs, args, err); flag != "" {
			err = fmt.Errorf("%w (a boolean flag takes its value after '=': --%s)", err, flag)
		}
		reportError(stderr, "replay", err)
		return exitUsage
	}
	write := rep.WriteText
	if f.asJSON {
		write = rep.WriteJSON
	}
	if err := write(stdout, in); err != nil {
		reportError(stderr, "replay", err)
		return exitUsage
	}
	if f.svg != "" {
		if err := svg.Write(replayChart(rep).WriteSVG); err != nil {
			reportError(stderr, "replay", err)
			return exitUsage
		}
		if !f.asJSON {
			fmt.Fprintf(stdout, "\nchart: %s\n", quote.IfNeeded(f.svg))
		}
	}
	if prof != nil {
		if err := prof.save(); err != nil {
			reportError(stderr, "replay", err)
			return exitUsage
		}
	}
	if rep.Rejected > 0 || rep.NoKey > 0 {
		return exitFindings
	}
	return exitOK
}

// contradictions returns why the flags set in fs contradict each other or
// say nothing, or "": a --json-* flag with a --format that reads no JSON
// lines (it would do nothing), a file flag given an empty name (an unset
// shell variable: no file would be written, in silence).
func contradictions(fs *flag.FlagSet, format string) string {
	var msg string
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case msg != "":
		case strings.HasPrefix(fl.Name, "json-") && (format == "clf" || format == "w3c"):
			msg = fmt.Sprintf("--%s is for JSON lines, which --format %s does not read", fl.Name, format)
		case (fl.Name == "svg" || fl.Name == "cpuprofile" || fl.Name == "config") && fl.Value.String() == "":
			msg = fmt.Sprintf("--%s: want a FILE name, not \"\"", fl.Name)
		}
	})
	return msg
}

// boolValueFlag returns, when err says that a log does not exist whose
// name is a boolean value ("false", "true", "0"...) that follows a
// boolean flag on the command line args of set ("--quiet false": the flag
// package sets --quiet and takes "false" for a log), the flag as it
// takes the value: "quiet=false"; "" otherwise. It reads args as the flag
// package does.
func boolValueFlag(set *flag.FlagSet, args []string, err error) string {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		return ""
	}
	if _, berr := strconv.ParseBool(pe.Path); berr != nil {
		return ""
	}
	for i := 0; i+1 < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' || strings.Contains(a, "=") {
			continue // a positional argument, or a flag with its value
		}
		f := set.Lookup(strings.TrimPrefix(a[1:], "-"))
		switch {
		case f == nil:
		case !isBoolFlag(f):
			i++ // its value
		case args[i+1] == pe.Path:
			return f.Name + "=" + pe.Path
		}
	}
	return ""
}

// givenTwice returns a log of logs named twice, or that is the same file
// as one named before under another name (./access.log and access.log, a
// link, standard input redirected from a log also named, or a pipe on
// standard input named "-" and /dev/stdin: two readers of one pipe would
// each get some of its bytes, lines cut in two), or "".
func givenTwice(logs []string) string {
	seen := map[string]bool{}
	var files []os.FileInfo
	for _, name := range logs {
		if seen[name] {
			return name
		}
		seen[name] = true
		fi, err := statInput(name)
		if err != nil {
			continue // opening it reports the error
		}
		for _, f := range files {
			if os.SameFile(f, fi) {
				return name
			}
		}
		files = append(files, fi)
	}
	return ""
}

// outputIsInput returns why an output file of f (--svg, --cpuprofile)
// may not be written, or "": it is an input (the configuration, a log,
// the file standard input reads), which writing it would destroy, or the
// other output. Devices and pipes (/dev/null, /dev/stdout) are no files
// to destroy.
func outputIsInput(f *replayFlags, logs []string) string {
	type file struct{ what, name string }
	ins := []file{{"the configuration", f.config}}
	for _, l := range logs {
		ins = append(ins, file{"a log", l})
	}
	for _, o := range []file{{"--svg", f.svg}, {"--cpuprofile", f.cpuprofile}} {
		if o.name == "" {
			continue
		}
		for _, in := range ins {
			if sameFile(o.name, in.name) {
				return fmt.Sprintf("%s %s is also %s, which it would be written over", o.what, quote.IfNeeded(o.name), in.what)
			}
		}
		ins = append(ins, file{"the " + o.what + " file", o.name})
	}
	return ""
}

// statInput returns the FileInfo of the input name, standard input for
// "-".
func statInput(name string) (os.FileInfo, error) {
	if name == "-" {
		return os.Stdin.Stat()
	}
	return os.Stat(name)
}

// readOnce reports whether the input name is standard input ("-") or
// not a regular file (a pipe, a terminal, /dev/stdin): what it gives, it
// gives once.
func readOnce(name string) bool {
	fi, err := statInput(name)
	return name == "-" || err != nil || !fi.Mode().IsRegular()
}

// sameInput reports whether the inputs a and b (either "-" for standard
// input) are one file, a pipe among them: read once for each, each
// reader would get only some of it.
func sameInput(a, b string) bool {
	fa, err := statInput(a)
	if err != nil {
		return false
	}
	fb, err := statInput(b)
	return err == nil && os.SameFile(fa, fb)
}

// sameFile reports whether the output out would be written over the file
// in: a regular file that both name (through links too), or for files
// yet to be made the same path. An input named "-" is standard input.
func sameFile(out, in string) bool {
	fi, err := statInput(in)
	if err != nil {
		return in != "-" && filepath.Clean(in) == filepath.Clean(out)
	}
	fo, err := os.Stat(out)
	return err == nil && fi.Mode().IsRegular() && os.SameFile(fi, fo)
}

func replayLogs(cfg *policy.Config, logs []string, f *replayFlags, stderr io.Writer) (*replay.Report, replay.Input, error) {
	var in replay.Input
	opts := logparse.Options{Format: logparse.Format(f.format), JSON: f.json}
	// A line further ahead of the lines after it in its log than the
	// reorder window is left out (see aheadReader).
	ahead, window := f.reorder, fmt.Sprintf("%s, the reorder window", f.reorder)
	if ahead == 0 {
		ahead, window = time.Minute, "1m0s" // lines replayed as logged
	}
	srcs, err := peekSources(logs, opts, ahead)
	if err != nil {
		return nil, in, err
	}
	total := logsSize(srcs)
	// Rotated logs replay oldest first.
	slices.SortStableFunc(srcs, func(a, b *source) int {
		if a.eof || b.eof { // empty logs last
			return cmpBool(a.eof, b.eof)
		}
		return a.first.Compare(b.first)
	})
	top := f.top
	if top == 0 {
		top = -1 // none
	}
	reorder := f.reorder
	if reorder == 0 {
		reorder = -1 // as logged
	}
	eng, err := replay.New(cfg, replay.Options{Routes: f.routes, Router: f.router, Compare: f.compare, Top: top, Reorder: reorder})
	if err != nil {
		return nil, in, err
	}
	prog := newProgress(stderr, total, f.quiet)
	m := &merger{eng: eng, opts: opts, srcs: srcs, in: &in, stderr: stderr, progress: prog, aheadWindow: window}
	for _, w := range eng.Warnings() {
		m.warn(w)
	}
	if err := m.run(); err != nil {
		return nil, in, err
	}
	prog.finish(in.Entries)
	if in.Entries == 0 {
		var why strings.Builder
		for _, m := range in.Samples {
			fmt.Fprintf(&why, "\n  %s", strings.ReplaceAll(m.String(), "\n", "\n  "))
		}
		names := slices.Clone(logs)
		for i, name := range names {
			if name == "-" {
				names[i] = stdinName
			} else {
				names[i] = quote.IfNeeded(name)
			}
		}
		return nil, in, fmt.Errorf("no parseable line in %s of %s%s", plural.Count(in.Lines, "line"), strings.Join(names, ", "), why.String())
	}
	rep, err := eng.Finish()
	if err != nil {
		return nil, in, err
	}
	for _, w := range eng.LogGaps() {
		m.warn(w)
	}
	return rep, in, nil
}

// logsSize returns the bytes of srcs to read, for progress: -1 (unknown)
// when one is read once (standard input, a pipe).
func logsSize(srcs []*source) int64 {
	var total int64
	for _, s := range srcs {
		if s.r != nil {
			return -1
		}
		total += s.size
	}
	return total
}

// replayChart charts each policy's admitted and rejected requests, and
// with --compare each algorithm's.
func replayChart(rep *replay.Report) *chart.Chart {
	c := &chart.Chart{Title: "ratekeeper replay: admitted and rejected requests per policy", Start: rep.BinStart, Bin: rep.Bin}
	for _, p := range rep.Policies {
		c.Series = append(c.Series, chart.Series{Name: p.Name + " (" + string(p.Spec.Algorithm) + ", as configured)", Admitted: p.Timeline.Admitted, Rejected: p.Timeline.Rejected})
		for _, s := range p.Compared {
			c.Series = append(c.Series, chart.Series{Name: p.Name + " alone under " + s.Name, Admitted: s.Admitted, Rejected: s.Rejected})
		}
	}
	return c
}

var (
	_ flag.Value = headerFlags(nil)
	_ repeatable = headerFlags(nil)
	_ repeatable = (*listFlag)(nil)
)

// defaults lists the default names of a JSON field, for the help.
func defaults(names []string) string { return strings.Join(names, ", ") }

// A cpuProfile is a CPU profile being taken, kept in memory until save
// writes it to its file: a replay that fails leaves the file as it was.
type cpuProfile struct {
	out     *outfile.File
	buf     bytes.Buffer
	stopped bool
}

// startProfile starts a CPU profile to be written to path; an error names
// the flag and the path.
func startProfile(path string) (*cpuProfile, error) {
	out, err := outfile.New("--cpuprofile", path)
	if err != nil {
		return nil, err
	}
	p := &cpuProfile{out: out}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		out.Discard()
		return nil, fmt.Errorf("--cpuprofile %s: %w", quote.IfNeeded(path), err)
	}
	return p, nil
}

// stop stops the profile, if it runs, and writes nothing.
func (p *cpuProfile) stop() {
	if !p.stopped {
		pprof.StopCPUProfile()
		p.stopped = true
	}
	p.out.Discard()
}

// save stops the profile and writes it to its file.
func (p *cpuProfile) save() error {
	if !p.stopped {
		pprof.StopCPUProfile()
		p.stopped = true
	}
	return p.out.Write(func(w io.Writer) error {
		_, err := w.Write(p.buf.Bytes())
		return err
	})
}
