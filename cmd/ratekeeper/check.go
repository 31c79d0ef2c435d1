package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/tty"
	"github.com/ratekeeper/ratekeeper/policy"
)

const checkHead = `Usage: ratekeeper check FILE

Check validates a configuration file (YAML or JSON) and prints the
effective policies, defaults applied, and advice on valid but risky
choices (a fixed window's boundary burst, a global key, a user key with no
fallback, ...). Problems are printed one per line as
file:line:column: field: reason. FILE "-" reads standard input, named
"stdin" in the report.

Exit status: 0 valid, 1 invalid, 2 usage error, or a file that cannot be
read, is larger than 256 KiB or is an access log.
`

// stdinName names standard input ("-") in the reports and errors of
// check and replay, as check's help says.
const stdinName = "stdin"

// checkStdin is what "check -" and "replay --config -" read: standard
// input (tests replace it).
var checkStdin io.Reader = os.Stdin

// hintTerminal writes one line on stderr, for the command cmd about to
// read what (the configuration, the log) from standard input in, when in
// is a terminal: a user who piped nothing would otherwise see the
// command wait silently. A character device that is no terminal
// (/dev/null), a pipe, a file or a reader without a descriptor gets no
// line.
func hintTerminal(stderr io.Writer, cmd string, in io.Reader, what, paste string) {
	if !tty.IsTerminal(in) {
		return
	}
	fmt.Fprintln(stderr, terminalHint(runtime.GOOS, cmd, what, paste))
}

// terminalHint returns hintTerminal's line on the system goos, which
// says the keys that end typed input there.
func terminalHint(goos, cmd, what, paste string) string {
	return fmt.Sprintf("ratekeeper %s: reading %s from standard input (a terminal): paste %s, end with %s; or pipe a file", cmd, what, paste, tty.EOFKeys(goos))
}

// loadConfig loads the configuration file name, or for "-" the one on
// standard input (checkStdin), named "stdin" in its errors. A file larger
// than policy.MaxConfigSize, and an access log given for the
// configuration, are errors of their own, not *policy.ConfigError: check
// and replay report them as input errors, exit status 2, as a file that
// cannot be read. The name is written in the errors and in the Config's
// File as quote.IfNeeded writes it: quoted when it holds a newline or
// another character that is not graphic, which would otherwise add a line
// of its own to the output or reach the terminal.
func loadConfig(name string) (*policy.Config, error) {
	var data []byte
	var err error
	file := name
	if name == "-" {
		file = stdinName
		data, err = io.ReadAll(io.LimitReader(checkStdin, policy.MaxConfigSize+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
	} else {
		// As policy.Load reads it, with its errors.
		f, err := os.Open(name)
		if err != nil {
			return nil, quotePath(err)
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, policy.MaxConfigSize+1))
		if err != nil {
			// "read PATH: is a directory" names the path again.
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == name {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: %w", quote.IfNeeded(name), err)
		}
	}
	if len(data) > policy.MaxConfigSize {
		err = fmt.Errorf("%s: is larger than %d bytes (256 KiB), the most a configuration may be; a real one takes a few kilobytes", quote.IfNeeded(file), policy.MaxConfigSize)
	} else {
		var cfg *policy.Config
		// The file's name, not quoted: its extension chooses the format.
		if cfg, err = policy.ParseConfig(data, file); err == nil {
			cfg.File = quote.IfNeeded(cfg.File)
			return cfg, nil
		}
		for _, ce := range policy.ConfigErrors(err) {
			ce.File = quote.IfNeeded(ce.File)
		}
	}
	if isLog(data) {
		// Arguments swapped: say so, not why a log is no configuration.
		return nil, fmt.Errorf("%s is an access log, not a configuration (YAML or JSON): replay reads the configuration --config names, then the logs after it (ratekeeper replay --config FILE LOG...)", quote.IfNeeded(file))
	}
	return nil, err
}

// isLog reports whether data, given as a configuration, starts as an
// access log that replay reads (plain or compressed): most of its first
// lines, at least two, are entries of a log.
func isLog(data []byte) bool {
	r, err := logparse.NewReader(bytes.NewReader(data), "", logparse.Options{})
	if err != nil {
		return false
	}
	entries := 0
	for entries < 10 && r.Lines() < 20 {
		if _, err := r.Next(); err != nil {
			break
		}
		entries++
	}
	return entries >= 2 && int64(entries) > r.MalformedCount()
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", checkHead, stderr)
	pos, code := parseFlags(fs, args, stdout)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		usageError(fs, stderr, "want exactly one FILE")
		return exitUsage
	}
	name := quote.IfNeeded(pos[0])
	if pos[0] == "-" {
		name = stdinName
	}
	if pos[0] == "-" {
		hintTerminal(stderr, "check", checkStdin, "the configuration", "it")
	}
	cfg, err := loadConfig(pos[0])
	if err != nil {
		ces := policy.ConfigErrors(err)
		if len(ces) == 0 || !errors.Is(err, policy.ErrConfig) {
			reportError(stderr, "check", err)
			return exitUsage
		}
		// The loader stops at its bound and says so in a last entry of
		// its own (Truncated), which is none of the file's problems: the
		// file has more than those listed.
		more := false
		if last := ces[len(ces)-1]; len(ces) > 1 && last.Truncated() {
			ces, more = ces[:len(ces)-1], true
		}
		for _, ce := range ces {
			fmt.Fprintln(stdout, strings.TrimPrefix(ce.Error(), "policy: "))
		}
		if more {
			fmt.Fprintf(stdout, "%s: more than %d problems; the first %d are listed above\n", name, len(ces), len(ces))
		} else {
			fmt.Fprintf(stdout, "%s: %s\n", name, plural.Count(len(ces), "problem"))
		}
		return exitFindings
	}
	writeConfig(stdout, cfg)
	if advice := lint(cfg); len(advice) > 0 {
		fmt.Fprintln(stdout, "\nadvice (the configuration is valid; these are choices often regretted):")
		for _, a := range advice {
			fmt.Fprintf(stdout, "  %s\n", a)
		}
	}
	return exitOK
}

// writeConfig prints the effective configuration.
func writeConfig(w io.Writer, cfg *policy.Config) {
	noun := "policies"
	if len(cfg.Policies) == 1 {
		noun = "policy"
	}
	fmt.Fprintf(w, "%s: valid, %d %s\n", cfg.File, len(cfg.Policies), noun)
	fmt.Fprintf(w, "headers %s; on store failure: %s", cfg.Headers, cfg.FailureMode)
	if ra := cfg.FailureRetryAfter; cfg.FailureMode == policy.FailureClosed {
		// Retry-After holds whole seconds: the middleware rounds up.
		if ra%time.Second != 0 {
			fmt.Fprintf(w, " (503, Retry-After %s, sent as %d seconds)", ra, ra/time.Second+1)
		} else {
			fmt.Fprintf(w, " (503, Retry-After %s)", ra)
		}
	}
	fmt.Fprintln(w)
	grouping := fmt.Sprintf("IPv4 by /%d, IPv6 by /%d", cfg.IPv4Prefix, cfg.IPv6Prefix)
	if len(cfg.NAT64Prefixes) > 0 {
		grouping += fmt.Sprintf("; NAT64 prefixes %s keyed as IPv4", prefixList(cfg.NAT64Prefixes))
	}
	if len(cfg.TrustedProxies) > 0 {
		fmt.Fprintf(w, "client IP: %s from trusted proxies %s; %s\n", cfg.IPSource, prefixList(cfg.TrustedProxies), grouping)
	} else if cfg.TrustedHops > 0 {
		fmt.Fprintf(w, "client IP: %s, entry %d from the right (trusted hops %d, whatever the connecting address); %s\n", cfg.IPSource, cfg.TrustedHops, cfg.TrustedHops, grouping)
	} else {
		fmt.Fprintf(w, "client IP: the connecting address (no trusted proxies); %s\n", grouping)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tALGORITHM\tLIMIT\tHEADER\tKEY\tNO KEY\tAPPLIES TO\tLINE")
	for i, p := range cfg.Policies {
		d := cfg.Definitions[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", p.Name(), p.Spec().Algorithm, limitText(p.Spec()), policyMember(cfg.Headers, cfg.Policies, i), d.KeyString(), p.KeyAction(), appliesTo(d), d.Line)
	}
	tw.Flush()
}

// prefixList returns ps written out, separated by commas.
func prefixList(ps []netip.Prefix) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ", ")
}

// policyMember returns the member of the i-th of ps in the
// RateLimit-Policy field as the header profile h sends it:
// `"name";q=..;w=..` (ietf, the default), `q;w=w` (draft-7, draft-6), or
// "-" for the profiles that send no such field. Drafts -06 and -07 name a
// policy by its quota: of the policies of a request that share one, the
// middleware sends the longest window's member alone, the first in order
// among equal windows (policy.Set.LegacyPolicyHeader); the member of a
// policy that another so shadows says with which it is not sent.
func policyMember(h policy.HeaderProfile, ps []*policy.Policy, i int) string {
	p := ps[i]
	switch h {
	case policy.HeadersDraft7, policy.HeadersDraft6:
		m := strings.TrimPrefix(p.String(), `"`+p.Name()+`";q=`)
		for j, o := range ps {
			if j != i && o.Capacity() == p.Capacity() && (o.WindowSeconds() > p.WindowSeconds() || o.WindowSeconds() == p.WindowSeconds() && j < i) {
				return m + " (not sent with " + o.Name() + ")"
			}
		}
		return m
	case policy.HeadersLegacy, policy.HeadersLegacyUnix, policy.HeadersNone:
		return "-"
	}
	return p.String()
}

// limitText formats a Spec's limit: "100 per 1m0s", with burst, buckets or
// queue.
func limitText(s algorithms.Spec) string {
	t := fmt.Sprintf("%d per %s", s.Limit, s.Window)
	switch {
	case s.Burst != 0:
		t += fmt.Sprintf(", burst %d", s.Burst)
	case s.Buckets != 0:
		t += ", " + plural.Count(s.Buckets, "bucket")
	case s.Algorithm == algorithms.LeakyQueue:
		t += fmt.Sprintf(", max delay %s", s.MaxDelay)
	}
	return t
}

// appliesTo describes a policy's matching: its methods and its route
// patterns, each named (a pattern may hold a method of its own, as in
// "POST /login"), quoted when it holds a character other than a graphic
// one (the policy package takes any inside a chi regexp's braces: a
// newline there would break the table's line in two).
func appliesTo(d policy.Definition) string {
	var parts []string
	if len(d.Methods) > 0 {
		parts = append(parts, "methods "+strings.Join(d.Methods, ","))
	}
	if len(d.Routes) > 0 {
		routes := make([]string, len(d.Routes))
		for i, r := range d.Routes {
			routes[i] = quote.IfNeeded(r)
		}
		parts = append(parts, "routes "+strings.Join(routes, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "all requests")
	}
	if d.Count != "" && d.Count != "all" {
		// Which responses count is part of what the policy applies to.
		parts = append(parts, "count: "+d.Count)
	}
	return strings.Join(parts, "; ")
}
