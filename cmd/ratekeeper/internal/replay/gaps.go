package replay

import (
	"fmt"
	"net/textproto"
	"slices"
	"strings"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/policy"
)

// logGaps records which of the key parts the policies read from the
// request itself (a header, a cookie, the user) any line of the logs
// gives: a part no line gives is a gap of the log (a Combined log records
// no request header but Referer and User-Agent), not of the traffic, and a
// policy none of whose keys the log can give finds a key for none of its
// requests.
type logGaps struct {
	headers map[string]bool // canonical header names the keys read: given by a line yet
	user    bool            // a line gave a user
	left    int             // headers not given yet
}

func newLogGaps(defs []policy.Definition) logGaps {
	g := logGaps{headers: map[string]bool{}}
	for _, d := range defs {
		for _, parts := range d.Key {
			for _, p := range parts {
				if h := partHeader(p); h != "" {
					if _, ok := g.headers[h]; !ok {
						g.headers[h] = false
						g.left++
					}
				}
			}
		}
	}
	return g
}

// partHeader returns the canonical name of the header a key part reads
// (Cookie for a cookie), or "".
func partHeader(part string) string {
	if name, ok := strings.CutPrefix(part, "header:"); ok {
		return textproto.CanonicalMIMEHeaderKey(name)
	}
	if strings.HasPrefix(part, "cookie:") {
		return "Cookie"
	}
	return ""
}

// see records the parts en gives.
func (g *logGaps) see(en *logparse.Entry) {
	if en.User != "" {
		g.user = true
	}
	if g.left == 0 {
		return
	}
	g.seeHeader("Referer", en.Referer)
	g.seeHeader("User-Agent", en.UserAgent)
	for _, h := range en.Headers {
		g.seeHeader(textproto.CanonicalMIMEHeaderKey(h.Name), h.Value)
	}
}

func (g *logGaps) seeHeader(name, value string) {
	if value == "" {
		return
	}
	if seen, ok := g.headers[name]; ok && !seen {
		g.headers[name] = true
		g.left--
	}
}

// missing returns what no line gave of the key parts parts ("a user",
// "the X-Api-Key header", "a Cookie header"), or nil.
func (g *logGaps) missing(parts []string) []string {
	var out []string
	for _, p := range parts {
		switch h := partHeader(p); {
		case p == "user" && !g.user:
			out = append(out, "a user")
		case h == "Cookie" && !g.headers[h]:
			out = append(out, "a Cookie header")
		case h != "" && h != "Cookie" && !g.headers[h]:
			out = append(out, "the "+h+" header")
		}
	}
	return out
}

// LogGaps returns a warning for each policy that applied to requests and
// none of whose keys (the key and its fallbacks) any line of the logs can
// give: it found a key for none of its requests, which says what the log
// records, not what the traffic sends. Call it after Finish.
func (e *Engine) LogGaps() []string {
	var out []string
	for _, ps := range e.pols {
		if ps.matched == 0 {
			continue
		}
		var gaps []string
		for _, parts := range ps.def.Key {
			m := e.gaps.missing(parts)
			if len(m) == 0 {
				gaps = nil // this key the log may give
				break
			}
			for _, s := range m {
				if !slices.Contains(gaps, s) {
					gaps = append(gaps, s)
				}
			}
		}
		if len(gaps) == 0 {
			continue
		}
		what := fmt.Sprintf("refused for want of a key (%d)", ps.def.OnMissingKey.Status())
		if ps.def.OnMissingKey == policy.SkipPolicy {
			what = "let through unlimited (on_missing_key: skip)"
		}
		out = append(out, fmt.Sprintf("policy %s (line %d): no line of the logs gives %s, which its key needs (%s): "+
			"each of its requests the replay reaches is %s, which says what the log records, not what the traffic sends "+
			"(a Common or Combined log records a user, Referer and User-Agent; JSON lines the fields --json-user and --json-header name)",
			ps.policy.Name(), ps.def.Line, strings.Join(gaps, ", nor "), ps.def.KeyString(), what))
	}
	return out
}
