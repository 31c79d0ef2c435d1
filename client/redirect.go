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
// redirected request goes at once), or past the context's deadline, is a
// held [*WaitError], at once, with nothing sent; ctx.Err() when the context
// ends during the wait. It returns how long it waited, which counts against
// the maximum wait with the holds the request waits for next (see
// [Transport.wait]).
func (t *Transport) redirectWait(ctx context.Context, req *http.Request, key string) (time.Duration, error) {
	prev := req.Response
	if prev == nil || prev.StatusCode < 300 || prev.StatusCode > 399 || t.maxRetryAfter == 0 {
		return 0, nil
	}
	d, ok := parseRetryAfter(prev.Header, t.clock.Now())
	if !ok || d <= 0 {
		return 0, nil
	}
	if d > t.maxWait || d > t.maxRetryAfter {
		return 0, &WaitError{Key: key, Wait: d, MaxWait: min(t.maxWait, t.maxRetryAfter), Held: true}
	}
	if pastDeadline(ctx, d) {
		return 0, &WaitError{Key: key, Wait: d, MaxWait: t.maxWait, Held: true, Deadline: true}
	}
	return d, t.clock.Sleep(ctx, d)
}
