package client

import (
	"context"
	"net/http"
	"time"
)

// redirectWait waits out the Retry-After of the redirect that made req, if
// any: with a 3xx, Retry-After is "the minimum time that the user agent is
// asked to wait before issuing the redirected request" (RFC 9110
// §10.2.3), and an http.Client that follows a redirect issues the new
// request at once, with the 3xx as its Response. Every form of Retry-After
// counts (see parseRetryAfter); one asking for no wait is none. The wait is
// bounded as every wait a server asks for: one longer than the maximum
// wait or than [WithMaxRetryAfter] (a maximum of 0 honours no wait: the
// redirected request goes at once), one that takes the waits of the
// redirects before it in its chain (see chainWaited) past the maximum
// wait, or one past the context's deadline, is a held [*WaitError], at
// once, with nothing sent; ctx.Err() when the context ends during the
// wait. It returns how long the chain has waited, which counts against
// the maximum wait with the holds the request waits for next (see
// [Transport.wait]).
func (t *Transport) redirectWait(ctx context.Context, req *http.Request, key string) (time.Duration, error) {
	prev := req.Response
	if prev == nil || prev.StatusCode < 300 || prev.StatusCode > 399 || t.maxRetryAfter == 0 {
		return 0, nil
	}
	now := t.clock.Now()
	d, ok := parseRetryAfter(prev.Header, now)
	if !ok || d <= 0 {
		return 0, nil
	}
	if d > t.maxWait || d > t.maxRetryAfter {
		return 0, &WaitError{Key: key, Wait: d, MaxWait: min(t.maxWait, t.maxRetryAfter), Held: true}
	}
	// The redirects before this one in the chain made the caller's one
	// request wait too: all of them together are bounded by the maximum
	// wait.
	before := chainWaited(prev, now, t.maxWait)
	if before+d > t.maxWait {
		return 0, &WaitError{Key: key, Wait: before + d, MaxWait: t.maxWait, Held: true}
	}
	if pastDeadline(ctx, d) {
		return 0, &WaitError{Key: key, Wait: before + d, MaxWait: t.maxWait, Held: true, Deadline: true}
	}
	return before + d, t.clock.Sleep(ctx, d)
}

// chainWaited returns the Retry-Afters of the redirects before prev in its
// chain (prev.Request's Response, its Request's Response, and so on), as
// redirectWait waited them out, each from its own response's Date when it
// has one (else from now, which can only count an HTTP-date short). It
// stops adding once the sum passes limit, so that a long chain neither
// overflows nor is walked further than needed.
func chainWaited(prev *http.Response, now time.Time, limit time.Duration) time.Duration {
	var sum time.Duration
	for r := prev.Request; r != nil && r.Response != nil && sum <= limit; r = r.Response.Request {
		resp := r.Response
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			break
		}
		at := now
		if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			at = date
		}
		if d, ok := parseRetryAfter(resp.Header, at); ok && d > 0 {
			sum += min(d, limit+1)
		}
	}
	return sum
}
