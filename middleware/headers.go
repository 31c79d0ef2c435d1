package middleware

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/lowest"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Header names, as the drafts spell them. Go sends them in canonical form
// ("Ratelimit-Policy"); field names are case-insensitive.
const (
	// HeaderRateLimitPolicy lists the quota policies (the IETF, Draft7
	// and Draft6 profiles; not Legacy, LegacyUnix or NoHeaders).
	HeaderRateLimitPolicy = "RateLimit-Policy"
	// HeaderRateLimit carries the current state: draft -11 list of
	// `"name";r=..;t=..` members, or the draft-7 dictionary.
	HeaderRateLimit = "RateLimit"
	// HeaderRateLimitLimit is the draft-6 limit.
	HeaderRateLimitLimit = "RateLimit-Limit"
	// HeaderRateLimitRemaining is the draft-6 remaining quota.
	HeaderRateLimitRemaining = "RateLimit-Remaining"
	// HeaderRateLimitReset is the draft-6 reset, in delay-seconds.
	HeaderRateLimitReset = "RateLimit-Reset"
	// HeaderXRateLimitLimit is the legacy limit.
	HeaderXRateLimitLimit = "X-RateLimit-Limit"
	// HeaderXRateLimitRemaining is the legacy remaining quota.
	HeaderXRateLimitRemaining = "X-RateLimit-Remaining"
	// HeaderXRateLimitReset is the legacy reset: delay-seconds or a Unix time.
	HeaderXRateLimitReset = "X-RateLimit-Reset"
	// HeaderRetryAfter is sent, in delay-seconds, on the 429 of a denied
	// request and on the 503s that a retry can follow (see [Profile]); not
	// on the 429 of a cost that no wait admits (see policy.WithCost), nor
	// on the 503 of a client gone while its request was decided or held.
	HeaderRetryAfter = "Retry-After"
	// HeaderCacheControl is set to "no-store" on rejections.
	HeaderCacheControl = "Cache-Control"
)

// Canonical forms, for direct use as header map keys.
var (
	keyPolicy     = http.CanonicalHeaderKey(HeaderRateLimitPolicy)
	keyRateLimit  = http.CanonicalHeaderKey(HeaderRateLimit)
	keyLimit      = http.CanonicalHeaderKey(HeaderRateLimitLimit)
	keyRemaining  = http.CanonicalHeaderKey(HeaderRateLimitRemaining)
	keyReset      = http.CanonicalHeaderKey(HeaderRateLimitReset)
	keyXLimit     = http.CanonicalHeaderKey(HeaderXRateLimitLimit)
	keyXRemaining = http.CanonicalHeaderKey(HeaderXRateLimitRemaining)
	keyXReset     = http.CanonicalHeaderKey(HeaderXRateLimitReset)
)

// A Profile selects the rate-limit headers the middleware sends on every
// response to a request the policies decided, allowed or not. Retry-After
// is sent on the 429 of a denied request, on [FailClosed]'s 503 and on the
// 503 of a leaky_queue request whose context's deadline comes at or before the
// end of its Delay, whatever the profile.
//
// Every number written is valid as the drafts define it, whatever the
// store answered: a Limit or Remaining below 0 (out of the Decision's
// range, from a third-party store) is written as 0 and one beyond the 15
// digits of a Structured Field Integer as 999999999999999, a negative
// time as 0, and the longest Duration as 9223372037 seconds.
type Profile int

const (
	// IETF sends the fields of draft-ietf-httpapi-ratelimit-headers-11 (the
	// syntax of drafts -08 to -11), one list member per applicable policy:
	//
	//	RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60
	//	RateLimit: "per-second";r=7;t=1, "per-minute";r=93;t=52
	//
	// q is the policy's capacity, w its window in whole seconds (rounded
	// up), r the Remaining after this request and t the whole seconds
	// (rounded up) until Remaining next grows: draft -10's meaning of t,
	// kept with -11's syntax. Draft -11 reads t as an "effective window"
	// within which the client can use no more than r, and says it implies
	// nothing about when the quota grows; the seconds until it grows are
	// what a client can act on, and what Retry-After, never earlier than
	// t, agrees with. It is the default.
	IETF Profile = iota
	// Draft7 sends draft -07's dictionary for the policy with the lowest
	// remaining, and the policies in draft -07 syntax (the per-second
	// policy of the IETF example above, 7 left of its 10):
	//
	//	RateLimit: limit=10, remaining=7, reset=1
	//	RateLimit-Policy: 10;w=1, 100;w=60
	//
	// As in every single-valued profile, a denied policy comes first, a
	// tie of remaining goes to the policy whose allowance takes longer to
	// come back (see [policy.Result.Lowest]; also across nested
	// middlewares), and on a 429 reset is the response's Retry-After.
	// Otherwise reset (Draft6's RateLimit-Reset, Legacy's
	// X-RateLimit-Reset) is the whole seconds, rounded up, until the
	// policy's allowance is back in full (its Decision's ResetAfter), the
	// time until the quota resets as those drafts define it: not IETF's t,
	// the wait until Remaining next grows, which can be shorter (a
	// per-second sliding window counter given ten requests in one second
	// and one 0.6 s into the next answers that one r=5;t=1 under IETF and
	// remaining=5, reset=2 here: the last request weighs on the second
	// after its own until that one ends).
	// Those drafts name a policy by its quota value, which no two members
	// of the list may share: of policies with the same limit, the list
	// holds the one with the longest window (see
	// [policy.Set.LegacyPolicyHeader]), also across nested middlewares.
	Draft7
	// Draft6 sends draft -06's separate fields for the policy with the
	// lowest remaining: RateLimit-Limit, RateLimit-Remaining,
	// RateLimit-Reset, and RateLimit-Policy as in Draft7.
	Draft6
	// Legacy sends X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (delay-seconds) for the policy with the lowest
	// remaining.
	Legacy
	// LegacyUnix is Legacy with X-RateLimit-Reset as a Unix time in
	// seconds, rounded up (httprate, ulule/limiter and GitHub do this).
	LegacyUnix
	// NoHeaders sends no rate-limit headers.
	NoHeaders
	// IETFMostConstraining is IETF with a RateLimit field of one member,
	// that of the most constraining policy, as the draft allows ("the
	// server MAY omit" the others); RateLimit-Policy still lists every
	// policy, as IETF does. Of 64 stacked policies it sends one RateLimit
	// member instead of 64:
	//
	//	RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60
	//	RateLimit: "per-second";r=7;t=1
	//
	// The member is the one IETF writes for that policy, byte for byte
	// (its t counted after a leaky_queue hold, its pk if any). The most
	// constraining policy is the one the single-valued profiles report
	// (see Draft7: a denied policy first, then the lowest remaining, a tie
	// going to the policy whose allowance takes longer to come back), but
	// for a request more than one policy denies: then it is the denied
	// policy with the longest wait (the larger of its RetryAfter and t),
	// the one the 429's Retry-After waits for, since a member keeps its
	// own t where the single-valued profiles raise their reset to the
	// Retry-After; a tie of waits goes to the single-valued order. It is
	// chosen the same way in shadow mode, where the request goes through,
	// and, for a request a leaky_queue held, among the decisions as the
	// Take gave them (or as a refund left them), when the headers are
	// written: a give-back after ([policy.CountIf]) revises the r and t
	// of the member written, as IETF revises its members, and chooses no
	// other.
	//
	// RateLimit-Policy does not shrink: the draft asks that the policy of
	// each RateLimit member be listed there and that the field stay the
	// same from one response to the next, which a list of the one policy
	// reported would not. A middleware nested in one that wrote its
	// headers in this profile writes in it too (see [WithHeaders]): each
	// adds a RateLimit line of one member, its own most constraining, and
	// a RateLimit-Policy line of all its policies. A line whose member a
	// middleware further in reports in its place (a policy it decided
	// again, see [ErrCountedTwice]) reports the most constraining of its
	// middleware's other policies, as IETF keeps their members; with
	// [WithPartitionKey] it goes instead, its pk being of a secret the
	// middleware further in does not hold.
	IETFMostConstraining
)

// String returns the profile's name.
func (p Profile) String() string {
	switch p {
	case IETF:
		return "ietf"
	case Draft7:
		return "draft-7"
	case Draft6:
		return "draft-6"
	case Legacy:
		return "legacy"
	case LegacyUnix:
		return "legacy-unix"
	case NoHeaders:
		return "none"
	case IETFMostConstraining:
		return "ietf-most-constraining"
	}
	return "Profile(" + strconv.Itoa(int(p)) + ")"
}

// seconds returns d in whole seconds, rounded up; 0 for d <= 0. It does
// not overflow: the largest Duration is 9223372037 seconds.
func seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// maxSFInteger is the largest Integer of a Structured Field (RFC 9651:
// 15 digits).
const maxSFInteger = 999_999_999_999_999

// sfCount returns n, a Limit or Remaining a store answered, as the
// non-negative Integer the rate-limit fields carry: below 0 (out of the
// Decision's range, from a third-party store) it is 0, above 15 digits
// the largest Integer.
func sfCount(n int64) int64 {
	return min(max(n, 0), maxSFInteger)
}

// since returns d, a time a decision gave from its instant, counted from
// held after it: never below -held (a negative d, out of the Decision's
// range, is 0), so that it does not overflow.
func since(d, held time.Duration) time.Duration {
	return max(d, 0) - held
}

// retrySeconds is the Retry-After of a denied result: whole seconds,
// rounded up, at least 1.
func retrySeconds(res *policy.Result) int64 {
	return max(1, seconds(res.RetryAfter()))
}

// resetAfter returns the time a single-valued profile reports as the reset
// of d: for a denied decision its wait (at least a second, as Retry-After),
// else the time until the allowance is fully restored. setHeadersAt raises a
// denied one to the response's Retry-After.
func resetAfter(d algorithms.Decision) time.Duration {
	if !d.Allowed {
		return max(time.Second, d.RetryAfter, d.NextAfter)
	}
	return d.ResetAfter
}

// setHeadersAt writes the rate-limit headers of res into h under profile p.
// outer, when not nil, is the Result of a middleware further out that
// already wrote its headers: list profiles add to them (a second field line
// is part of the same list), single-valued profiles keep the outer values
// unless res is denied or reports a lower remaining. now is read only by LegacyUnix;
// pkSecret, when not nil, adds a pk parameter to the IETF RateLimit members.
//
// The values are built in buf (appended to from its start; when it is too
// small they are allocated) and the IETF and Draft7 header slices in vals:
// both must be fresh (never used before) since the header values point
// into them.
//
// held is the time since the decision, for a response held for a
// leaky_queue Delay (0 otherwise): the drafts' reset and t are
// delta-seconds from the response's generation, so the times of res are
// counted from now, reduced by held (never below 0) before they are
// rounded up. Remaining stays as the decision left it, since requests
// decided during the hold may have spent what the time gave back. A
// LegacyUnix reset is an instant: now (read after the hold) plus the
// reduced time is the instant the decision named.
//
// After a refund ([policy.Result.Refunded]: a held request that was not
// served) the leaky_queue decisions of res are the store's look at each
// queue after it, at the refund's instant: they are reported as they are,
// their times counted from then (see sinceDecision), and the single-valued
// profiles choose among them as among any decisions.
func setHeadersAt(h http.Header, p Profile, res, outer *policy.Result, now func() time.Time, pkSecret []byte, vals *[2]string, buf []byte, held time.Duration) {
	setHeadersWait(h, p, res, outer, now, pkSecret, vals, buf, held, 0)
}

// setHeadersWait is setHeadersAt for a denied res whose 429 waits at least
// wait (see outerWait): a single-valued profile's reset is the response's
// Retry-After.
func setHeadersWait(h http.Header, p Profile, res, outer *policy.Result, now func() time.Time, pkSecret []byte, vals *[2]string, buf []byte, held, wait time.Duration) {
	if !decided(res) || p == NoHeaders {
		return
	}
	switch p {
	case IETF, IETFMostConstraining:
		b := buf[:0]
		set := res.Set()
		ds := resultroom.Decisions(res) // read in place, not copied one by one
		// The member written, or -1 for every member.
		only := -1
		if p == IETFMostConstraining {
			only = mostConstraining(ds)
		}
		// The policies of res are those of its mask, in Set order: the
		// walk finds each in one step, where res.Policy(i) walks the
		// mask from its start.
		for i, m := 0, res.Mask(); m != 0; i, m = i+1, m&(m-1) {
			if only >= 0 && i != only {
				continue
			}
			d := &ds[i]
			if len(b) > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '"')
			b = append(b, set.Policy(bits.TrailingZeros64(m)).Name()...)
			b = append(b, `";r=`...)
			b = appendInt(b, sfCount(d.Remaining))
			b = append(b, ";t="...)
			b = appendInt(b, seconds(since(d.NextAfter, sinceDecision(res, i, held))))
			if pkSecret != nil {
				b = appendPK(b, pkSecret, res.Key(i))
			}
		}
		add2(vals, h, keyPolicy, res.Set().PolicyHeader(res.Mask()), keyRateLimit, str(b))
		return
	}
	lowest := res.Lowest()
	d := res.Decision(lowest)
	// The reset of a denied response is its Retry-After (drafts -06/-07:
	// both name the same instant), even when the policy reported (the
	// lowest remaining) is not the one with the longest wait.
	after := resetAfter(d)
	if !d.Allowed {
		after = max(after, res.RetryAfter(), wait)
	}
	after = since(after, sinceDecision(res, lowest, held)) // from now: seconds makes one below 0 a 0, LegacyUnix adds it to now
	policies := res.Set().LegacyPolicyHeader(res.Mask())
	if decided(outer) {
		if p == Draft6 || p == Draft7 {
			// The policy list covers both middlewares.
			h[keyPolicy] = addPolicies(h[keyPolicy], policies)
			policies = ""
		}
		// A denied res answers the response (an outer one that denied was
		// in shadow mode), so its values are reported, reset = Retry-After.
		if keepsOuter(p, res, outer) {
			return
		}
	}
	setValues(h, p, d, after, now, vals, buf, policies)
}

// setValues writes into h the values of d under the single-valued profile
// p, its reset after from now, and policies, when not empty, as the
// draft -06/-07 RateLimit-Policy, built in vals and buf as setHeadersAt
// builds them.
func setValues(h http.Header, p Profile, d algorithms.Decision, after time.Duration, now func() time.Time, vals *[2]string, buf []byte, policies string) {
	switch p {
	case Draft7:
		b := append(buf[:0], "limit="...)
		b = appendInt(b, sfCount(d.Limit))
		b = append(b, ", remaining="...)
		b = appendInt(b, sfCount(d.Remaining))
		b = append(b, ", reset="...)
		b = appendInt(b, seconds(after))
		vals[0], vals[1] = str(b), policies
		h[keyRateLimit] = vals[0:1:1]
		if policies != "" {
			h[keyPolicy] = vals[1:2:2]
		}
	case Draft6:
		// The three numbers share one buffer in the scratch.
		b := appendInt(buf[:0], sfCount(d.Limit))
		n1 := len(b)
		b = appendInt(b, sfCount(d.Remaining))
		n2 := len(b)
		b = appendInt(b, seconds(after))
		s := str(b)
		vals[0] = s          // the values of res, for retimeOuter
		vs := new([4]string) // more values than the caller's vals
		vs[0], vs[1], vs[2], vs[3] = s[:n1], s[n1:n2], s[n2:], policies
		h[keyLimit], h[keyRemaining], h[keyReset] = vs[0:1:1], vs[1:2:2], vs[2:3:3]
		if policies != "" {
			h[keyPolicy] = vs[3:4:4]
		}
	case Legacy, LegacyUnix:
		r := seconds(after)
		if p == LegacyUnix {
			t := now().Add(after)
			r = t.Unix()
			if t.Nanosecond() > 0 {
				r++
			}
		}
		b := appendInt(buf[:0], sfCount(d.Limit))
		n1 := len(b)
		b = appendInt(b, sfCount(d.Remaining))
		n2 := len(b)
		b = appendInt(b, r)
		s := str(b)
		vals[0] = s          // the values of res, for retimeOuter
		vs := new([3]string) // more values than the caller's vals
		vs[0], vs[1], vs[2] = s[:n1], s[n1:n2], s[n2:]
		h[keyXLimit], h[keyXRemaining], h[keyXReset] = vs[0:1:1], vs[1:2:2], vs[2:3:3]
	}
}

// addPolicies returns the lines of a draft -06/-07 RateLimit-Policy
// field: lines, those the middlewares further out wrote, and policies, the
// list of ours. Those drafts say that no two members share a quota value;
// the lines make one list, so a member that another of the same quota
// value shadows is left out, as [policy.Set.LegacyPolicyHeader] leaves it
// out of one list: one with a longer window, or the same window and an
// earlier place (a line further out first). A line left empty is dropped.
// A member in another form (not `q;w=w`) is kept as it is.
func addPolicies(lines []string, policies string) []string {
	type member struct {
		line int
		text string
		q, w int64
		ok   bool
	}
	var ms []member
	for li, l := range append(lines[:len(lines):len(lines)], policies) {
		for t := range strings.SplitSeq(l, ", ") {
			m := member{line: li, text: t}
			if qs, ws, found := strings.Cut(t, ";w="); found {
				q, err1 := strconv.ParseInt(qs, 10, 64)
				w, err2 := strconv.ParseInt(ws, 10, 64)
				m.q, m.w, m.ok = q, w, err1 == nil && err2 == nil
			}
			ms = append(ms, m)
		}
	}
	drop := make([]bool, len(ms))
	dropped := false
	for i, m := range ms {
		for j, o := range ms {
			if m.ok && o.ok && o.q == m.q && (o.w > m.w || o.w == m.w && j < i) {
				drop[i], dropped = true, true
				break
			}
		}
	}
	if !dropped {
		return append(lines, policies)
	}
	out := make([]string, 0, len(lines)+1)
	for li := range len(lines) + 1 {
		var b strings.Builder
		for i, m := range ms {
			if m.line != li || drop[i] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m.text)
		}
		if b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	return out
}

// holdsValues reports whether the headers setHeadersAt wrote for res under p
// hold its values, so that res counts as having written them. Not so where
// a single-valued profile kept the outer values (lower than ours): then a
// middleware further in compares its own with those.
func holdsValues(p Profile, res, outer *policy.Result) bool {
	return res.Len() > 0 && p != NoHeaders && !keepsOuter(p, res, outer)
}

// decided reports whether res, if not nil, was taken and decided at least
// one policy: only then has it headers to write, or values to compare.
func decided(res *policy.Result) bool {
	return res != nil && res.Taken() && res.Len() > 0
}

// keepsOuter reports whether the single-valued profile p keeps the values
// outer wrote in place of those of res: res is allowed, and outer's
// decision is denied, reports a lower remaining, or the same remaining and
// a reset no shorter (see lowest.Before). Then the values in the header stay
// outer's, and a middleware further in must compare its own with outer's.
// (A reset outer's hold shortened is compared as decided, before the
// hold.)
func keepsOuter(p Profile, res, outer *policy.Result) bool {
	if p == IETF || !decided(outer) || !decided(res) {
		return false
	}
	d := res.Decision(res.Lowest())
	return d.Allowed && !lowest.Before(d, outer.Decision(outer.Lowest()))
}

// sinceDecision returns how long before now the i-th decision of res was
// made, for a response held for held since its Take: held, except for a
// leaky_queue decision a refund replaced, which the store made at the
// refund's instant, when the hold ended ([algorithms.Refunded]).
// It is small enough to inline: a response not refunded pays one test.
func sinceDecision(res *policy.Result, i int, held time.Duration) time.Duration {
	if held > 0 && res.Refunded() && isQueue(res, i) {
		return 0
	}
	return held
}

// isQueue reports whether the i-th policy of res is a leaky_queue. It is
// not inlined, so that sinceDecision is.
//
//go:noinline
func isQueue(res *policy.Result, i int) bool {
	return res.Policy(i).Spec().Algorithm == algorithms.LeakyQueue
}

// str returns the bytes of b as a string without copying. b must not be
// written again: it points into a fresh per-request buffer (or a fresh
// allocation when it outgrew it), written once per response.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// add2 adds v1 to h[k1] and v2 to h[k2], without allocating (the slices
// are backed by vals) when both are new. vals holds v1 and v2 in any case,
// for retimeOuter. An empty h (no middleware further out, nor the
// handler, has written a field yet: the common case) is not looked up.
func add2(vals *[2]string, h http.Header, k1, v1, k2, v2 string) {
	vals[0], vals[1] = v1, v2
	var o1, o2 []string
	if len(h) > 0 {
		o1, o2 = h[k1], h[k2]
	}
	if o1 == nil && o2 == nil {
		h[k1], h[k2] = vals[0:1:1], vals[1:2:2]
		return
	}
	h[k1], h[k2] = append(o1, v1), append(o2, v2)
}

// retimeOuter counts from now the rate-limit headers in h that the
// middlewares further out wrote for the request of ctx, which was then
// held for held (a leaky_queue Delay): their delta-seconds are reduced by
// held, and by the holds of the middlewares between them and this one
// (their heldContexts), before they are rounded up, as setHeadersAt counts
// those of the request it held. The IETF profile has a line of each such
// middleware; a single-valued profile has the values of the innermost,
// while they are still in h. LegacyUnix's reset is an instant, which no
// hold changes. A middleware built WithoutContext is not seen, nor its
// hold.
func retimeOuter(ctx context.Context, h http.Header, held time.Duration) {
	if held <= 0 {
		return
	}
	eachOuter(ctx, chainKey{}, held, func(c *resultContext, held time.Duration) bool {
		p := Profile(c.res.wrote - 1)
		if p != IETF {
			if p != LegacyUnix {
				retimeValues(h, p, c, held)
			}
			return false
		}
		retimeLine(h, c, held)
		return true
	})
}

// retimeLine replaces in h the IETF RateLimit line of c, if there, by its
// values counted after held since c's decision.
func retimeLine(h http.Header, c *resultContext, held time.Duration) {
	replaceLine(h, &c.vals, func(line string) string { return retimeMembers(line, &c.res.pr, held) })
}

// replaceLine replaces in h the IETF RateLimit line vals[1], the one
// setHeadersAt wrote there (the same string, not only the same text), if it
// is still there, by revise(line), and keeps the new line in vals[1].
func replaceLine(h http.Header, vals *[2]string, revise func(line string) string) {
	editLine(h, keyRateLimit, &vals[1], revise)
}

// editLine replaces in h, among the field lines of key, the line *line
// (the same string, not only the same text: a middleware further out
// wrote it before the lines of those further in), if it is still there,
// by edit(*line), and keeps the new line in *line. A line edited empty is
// removed, and the field with it when it was its only line.
func editLine(h http.Header, key string, line *string, edit func(line string) string) {
	old := *line
	vs := h[key]
	for i, v := range vs {
		if old != "" && len(v) == len(old) && unsafe.StringData(v) == unsafe.StringData(old) {
			edited := edit(old)
			vs = slices.Clone(vs)
			if vs[i], *line = edited, edited; edited == "" {
				vs = slices.Delete(vs, i, i+1)
			}
			if len(vs) == 0 {
				delete(h, key)
			} else {
				h[key] = vs
			}
			return
		}
	}
}

// withoutMember returns the IETF list line without its member of the
// policy named name ("name";... up to the next ", "), if it has one.
func withoutMember(line, name string) string {
	var b strings.Builder
	for m := range strings.SplitSeq(line, ", ") {
		if isMember(m, name) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m)
	}
	return b.String()
}

// isMember reports whether s, the rest of an IETF list line from a
// member's start, begins with the member of the policy named name. Names
// hold no '"', so the closing quote ends the name.
func isMember(s, name string) bool {
	return len(s) > len(name)+1 && s[0] == '"' && s[1:1+len(name)] == name && s[1+len(name)] == '"'
}

// retimeMembers returns line, the IETF RateLimit value setHeadersAt wrote
// for res, with the t of each member counted after held since the
// decision. The rest of each member (its pk, of a secret only the
// middleware that wrote it knows) is kept. A member a middleware further
// in removed since (see unlistOuter) is passed over.
func retimeMembers(line string, res *policy.Result, held time.Duration) string {
	b := make([]byte, 0, len(line)+8)
	rest := line
	for i := 0; i < res.Len(); i++ {
		// Names hold no '"', pks ("pk=:base64:") neither: the next '"'
		// opens the next member.
		if k := strings.IndexByte(rest, '"'); k < 0 || !isMember(rest[k:], res.Policy(i).Name()) {
			continue
		}
		// Names hold no ';', pks ("pk=:base64:") no ";t=".
		j := strings.Index(rest, ";t=")
		if j < 0 {
			return line
		}
		b = append(b, rest[:j+len(";t=")]...)
		rest = rest[j+len(";t="):]
		k := 0
		for k < len(rest) && '0' <= rest[k] && rest[k] <= '9' {
			k++
		}
		b = appendInt(b, seconds(since(res.Decision(i).NextAfter, sinceDecision(res, i, held))))
		rest = rest[k:]
	}
	return str(append(b, rest...))
}

// reviseLine replaces in h the IETF RateLimit line of res (see
// replaceLine), decided by the middleware and written with vals, if it is
// still there, by one whose members of the policies of given (bit i: the
// i-th policy of res) report what the store reported of their keys after
// a give-back (see [policy.Result.GiveBack]): r as it stands, t counted
// from now. The other members are kept as written. The single-valued
// profiles are left as written: their values are those of one policy,
// chosen among the decisions of every middleware that the request
// passed, when they were set. vals is nil only where no headers are
// written (NoHeaders without context), so that res wrote none. A line of
// one member (IETFMostConstraining, see markMost) is that of the most
// constraining policy as the decisions stand after the give-back (see
// reviseMost), held (the request's hold before it was served) and
// pkSecret writing a member the line did not hold as IETF wrote it.
func reviseLine(h http.Header, res *Result, vals *[2]string, given uint64, held time.Duration, pkSecret []byte) {
	if given == 0 || res.wrote != uint8(IETF)+1 {
		return
	}
	if res.marks&markMost != 0 {
		replaceLine(h, vals, func(line string) string { return reviseMost(line, vals[0], &res.pr, given, held, pkSecret) })
		return
	}
	replaceLine(h, vals, func(line string) string { return reviseMembersAt(line, vals[0], &res.pr, given) })
}

// reviseMembers returns line, the IETF RateLimit value setHeadersAt wrote
// for res, with the r and t of the members of the policies of given as
// res now has their decisions, t counted from now. The rest of each
// member is kept. A member a middleware further in removed since (see
// unlistOuter) is passed over, and the members after it are still
// revised.
func reviseMembers(line string, res *policy.Result, given uint64) string {
	return reviseMembersAt(line, "", res, given)
}

// reviseMembersAt is reviseMembers where quota is res's IETF
// RateLimit-Policy line as it stands: a member restated there at a q
// below its policy's limit (a window kind's copy raised further out, which
// a middleware further in holds at its own limit, see restateOuter) has
// its r judged at that q (judgedAt: the same state, at the limit in
// force), so that the give-back raises it by what came back, not by the
// difference of the two limits too.
func reviseMembersAt(line, quota string, res *policy.Result, given uint64) string {
	b := make([]byte, 0, len(line)+8)
	rest := line
	for i := 0; i < res.Len(); i++ {
		// Names hold no '"', pks ("pk=:base64:") neither: the next '"'
		// opens the next member still in the line.
		if k := strings.IndexByte(rest, '"'); k < 0 || !isMember(rest[k:], res.Policy(i).Name()) {
			continue
		}
		d := res.Decision(i)
		if q, ok := paramOf(quota, res.Policy(i).Name(), "q"); ok && q < d.Limit {
			d = judgedAt(res.Policy(i).Spec(), d, q)
		}
		for _, param := range [2]string{";r=", ";t="} {
			// Names hold no ';', pks ("pk=:base64:") neither ";r=" nor ";t=".
			j := strings.Index(rest, param)
			if j < 0 {
				return line
			}
			b = append(b, rest[:j+len(param)]...)
			rest = rest[j+len(param):]
			k := 0
			for k < len(rest) && '0' <= rest[k] && rest[k] <= '9' {
				k++
			}
			switch {
			case given&(1<<i) == 0:
				b = append(b, rest[:k]...)
			case param == ";r=":
				b = appendInt(b, sfCount(d.Remaining))
			default:
				b = appendInt(b, seconds(since(d.NextAfter, 0)))
			}
			rest = rest[k:]
		}
	}
	return str(append(b, rest...))
}

// retimeValues writes in h the values of the single-valued profile p of
// c, if they are still those in h, counted after held since c's decision.
func retimeValues(h http.Header, p Profile, c *resultContext, held time.Duration) {
	if !holdsValuesOf(h, p, &c.vals) {
		return
	}
	policies, had := h[keyPolicy]
	hv := new(wideHeaderValues)
	setHeadersAt(h, p, &c.res.pr, nil, time.Now, nil, &hv.vals, hv.long[:0], held)
	if had {
		h[keyPolicy] = policies // the list of every middleware, which no hold changes
	} else {
		delete(h, keyPolicy)
	}
	c.vals[0] = hv.vals[0]
}

// pkLen is the number of hash bytes in a partition key (12 base64 chars).
const pkLen = 9

// appendPK appends the pk parameter for key: a Structured Field byte
// sequence holding the first 9 bytes of SHA-256(secret, key). The key
// itself is never sent; the secret keeps the hash of a small key space
// (IPv4 addresses) from being inverted by enumeration.
func appendPK(b, secret []byte, key string) []byte {
	hh := sha256.New()
	hh.Write(secret)
	hh.Write([]byte(key))
	var sum [sha256.Size]byte
	hh.Sum(sum[:0])
	b = append(b, ";pk=:"...)
	b = base64.StdEncoding.AppendEncode(b, sum[:pkLen])
	return append(b, ':')
}
