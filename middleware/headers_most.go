package middleware

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/lowest"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/policy"
)

// mostConstraining returns the index of the decision of ds whose member
// the IETFMostConstraining profile writes: of two denied decisions the
// one with the longer wait (the larger of RetryAfter and NextAfter, as
// policy.Result.RetryAfter reckons the Retry-After), otherwise the one
// lowest.Before puts first (as policy.Result.Lowest chooses); on a full
// tie, the first. ds holds at least one decision.
func mostConstraining(ds []algorithms.Decision) int {
	best := 0
	for i := 1; i < len(ds); i++ {
		if moreConstraining(ds[i], ds[best]) {
			best = i
		}
	}
	return best
}

// moreConstraining reports whether d is reported in preference to b by
// the IETFMostConstraining profile (see mostConstraining).
func moreConstraining(d, b algorithms.Decision) bool {
	if !d.Allowed && !b.Allowed {
		if dw, bw := max(d.RetryAfter, d.NextAfter), max(b.RetryAfter, b.NextAfter); dw != bw {
			return dw > bw
		}
	}
	return lowest.Before(d, b)
}

// split returns the profile p writes in, as the rest of the middleware
// tells profiles apart (IETFMostConstraining writes IETF lines, which the
// middlewares nested further in read, retime and revise as IETF's), and
// whether its RateLimit lines carry only the most constraining member.
func (p Profile) split() (Profile, bool) {
	if p == IETFMostConstraining {
		return IETF, true
	}
	return p, false
}

// headerProfile returns the profile in which setHeadersAt writes the
// headers of res under p: IETFMostConstraining for IETF when res is
// marked so (markMost), else p.
func headerProfile(p Profile, res *Result) Profile {
	if p == IETF && res.marks&markMost != 0 {
		return IETFMostConstraining
	}
	return p
}

// reviseMost is reviseMembersAt for line, the one-member IETF RateLimit
// line IETFMostConstraining wrote for res, after a give-back of the
// policies of given: when the member is of a policy given back, it is
// that of the policy most constraining as the decisions of res now stand
// (the one given back may no longer be), written as IETF writes it (t
// counted after held, the hold before the request was served; pk of
// pkSecret), then revised as IETF's line is.
func reviseMost(line, quota string, res *policy.Result, given uint64, held time.Duration, pkSecret []byte) string {
	// A give-back only raises the members of given: a member of another
	// policy stays the most constraining (one restated further in, see
	// mostRestated, too).
	k := strings.IndexByte(line, '"')
	for i := range res.Len() {
		if k >= 0 && given&(1<<i) == 0 && isMember(line[k:], res.Policy(i).Name()) {
			return reviseMembersAt(line, quota, res, given)
		}
	}
	j := mostConstraining(resultroom.Decisions(res))
	name := res.Policy(j).Name()
	if k < 0 || !isMember(line[k:], name) {
		d := res.Decision(j)
		b := make([]byte, 0, len(line)+8)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `";r=`...)
		b = appendInt(b, sfCount(d.Remaining))
		b = append(b, ";t="...)
		b = appendInt(b, seconds(since(d.NextAfter, sinceDecision(res, j, held))))
		if pkSecret != nil {
			b = appendPK(b, pkSecret, res.Key(j))
		}
		line = str(b)
	}
	return reviseMembersAt(line, quota, res, given)
}

// mostRestated replaces the RateLimit line of one member that r.c's
// middleware wrote (IETFMostConstraining) by the member of r's policy
// restated at the limit of the middleware further in that holds the
// client there (see restateOuter), when that one is the more
// constraining: r.d, judged there, against r.c's decision of the policy
// whose member the line carries. The member is the one IETF restates:
// r judged there, t that of r.c's decision of the policy, counted after
// held (the hold further in since its decision) and the holds since r.c's
// decision (see eachOuter). A line with a pk parameter (of a secret r.c's
// middleware alone knows) is left as it is.
func mostRestated(h http.Header, r restated, held time.Duration) {
	line := r.c.vals[1]
	if line == "" || strings.Contains(line, ";pk=") {
		return
	}
	o := &r.c.res.pr
	shown, j := -1, -1
	for i := range o.Len() {
		if k := strings.IndexByte(line, '"'); k >= 0 && isMember(line[k:], o.Policy(i).Name()) {
			shown = i
		}
		if o.Policy(i) == r.p {
			j = i
		}
	}
	if shown < 0 || j < 0 || !moreConstraining(r.d, o.Decision(shown)) {
		return
	}
	eachOuter(r.ctx, chainKey{}, held, func(c *resultContext, since time.Duration) bool {
		if c != r.c {
			return true
		}
		held = since
		return false
	})
	name := r.p.Name()
	b := make([]byte, 0, len(line)+len(name))
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `";r=`...)
	b = appendInt(b, sfCount(r.d.Remaining))
	b = append(b, ";t="...)
	b = appendInt(b, seconds(since(o.Decision(j).NextAfter, sinceDecision(o, j, held))))
	editLine(h, keyRateLimit, &r.c.vals[1], func(string) string { return str(b) })
}

// dropOuterMember removes from h the members of the policy named name in
// the IETF lines of c's middleware, further out in ctx (see unlistOuter,
// restateOuter, oneMemberPerName: a middleware further in reports that
// policy). held is the hold of the request since the decision of the
// middleware that removes them (0 before one) that ctx does not tell;
// the holds between c's middleware and it are read from ctx (see
// eachOuter). A RateLimit line of one member left empty is refilled as
// dropMember says.
func dropOuterMember(ctx context.Context, h http.Header, c *resultContext, name string, held time.Duration) {
	since := held
	if c.res.marks&markMost != 0 {
		eachOuter(ctx, chainKey{}, held, func(o *resultContext, s time.Duration) bool {
			if o != c {
				return true
			}
			since = s
			return false
		})
	}
	dropMember(h, &c.vals, &c.res.pr, c.res.marks&markMost != 0, name, since)
}

// dropMember removes from h the members of the policy named name in the
// IETF lines vals, which a middleware wrote for res (most: under
// IETFMostConstraining, its RateLimit line of one member, see markMost),
// its decisions made held before now.
//
// A RateLimit line of one member whose member goes reports then the most
// constraining of the other policies of res still listed in its
// RateLimit-Policy line, as IETF keeps its other members: its member as
// IETF writes it (see setHeadersAt), t counted after held, r judged at
// the q its RateLimit-Policy member was restated at, if lower (see
// restateOuter). It is left empty, and goes, when res's policies have no
// other member there, and when the line carried a pk parameter: of a
// secret only the middleware that wrote it knows, which the one removing
// the member may not be.
func dropMember(h http.Header, vals *[2]string, res *policy.Result, most bool, name string, held time.Duration) {
	drop := func(line string) string { return withoutMember(line, name) }
	editLine(h, keyPolicy, &vals[0], drop)
	if !most {
		editLine(h, keyRateLimit, &vals[1], drop)
		return
	}
	editLine(h, keyRateLimit, &vals[1], func(line string) string {
		rest := withoutMember(line, name)
		if rest != "" || strings.Contains(line, ";pk=") {
			return rest
		}
		return mostOfRest(vals[0], res, held)
	})
}

// mostOfRest returns the one-member IETF RateLimit line of the most
// constraining policy of res whose member quota, its RateLimit-Policy
// line, lists (see dropMember), or "" when there is none.
func mostOfRest(quota string, res *policy.Result, held time.Duration) string {
	best := -1
	var bd algorithms.Decision
	for j := range res.Len() {
		q, ok := paramOf(quota, res.Policy(j).Name(), "q")
		if !ok {
			continue
		}
		d := res.Decision(j)
		if q < d.Limit {
			d = judgedAt(res.Policy(j).Spec(), d, q)
		}
		if best < 0 || moreConstraining(d, bd) {
			best, bd = j, d
		}
	}
	if best < 0 {
		return ""
	}
	b := append([]byte{'"'}, res.Policy(best).Name()...)
	b = append(b, `";r=`...)
	b = appendInt(b, sfCount(bd.Remaining))
	b = append(b, ";t="...)
	b = appendInt(b, seconds(since(bd.NextAfter, sinceDecision(res, best, held))))
	return str(b)
}
