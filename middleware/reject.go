package middleware

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// Problem types (RFC 9457 "type" members).
const (
	// ProblemTypeQuotaExceeded is the type of a 429 body: the problem type
	// draft-ietf-httpapi-ratelimit-headers asks IANA to register.
	ProblemTypeQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	// ProblemTypeBlank is the type of the other rejections (400, 403, 503),
	// whose title is the status phrase.
	ProblemTypeBlank = "about:blank"
	// ContentTypeProblem is the media type of problem details.
	ContentTypeProblem = "application/problem+json"
)

// deny writes the default 429 response for a denied res: Retry-After (the
// longest wait among the violated policies, never before their t, nor
// before wait, that of the middlewares further out: see outerWait),
// Cache-Control: no-store, and a problem+json body naming the violated
// policies in "violated-policies". A policy that denied the request for a
// cost above its lowered limit (policy.Result.AboveLimit) is named so in
// the detail: "Quota exceeded for upload; retry in 45 seconds. The
// request costs 90 units; policy upload admits 1 to 80 while its limit
// is lowered (1 to 100 as configured)."
func (m *Middleware) deny(w http.ResponseWriter, res *Result, wait time.Duration) {
	retry := max(retrySeconds(&res.pr), seconds(wait))
	var buf [512]byte
	b := append(buf[:0], `{"type":"`...)
	b = append(b, m.problemType...)
	b = append(b, `","title":"Too Many Requests","status":429,"detail":"Quota exceeded for `...)
	first := true
	for i := 0; i < res.Len(); i++ {
		if res.Decision(i).Allowed {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = append(b, res.Policy(i).Name()...)
	}
	b = append(b, "; retry in "...)
	b = strconv.AppendInt(b, retry, 10)
	if retry == 1 {
		b = append(b, ` second.`...)
	} else {
		b = append(b, ` seconds.`...)
	}
	for i := 0; i < res.Len(); i++ {
		if res.AboveLimit(i) {
			p := res.Policy(i)
			b = append(b, " The request costs "...)
			b = strconv.AppendInt(b, res.Cost(i), 10)
			b = append(b, " units; policy "...)
			b = append(b, p.Name()...)
			b = append(b, " admits 1 to "...)
			b = strconv.AppendInt(b, p.Capacity(), 10)
			b = append(b, " while its limit is lowered (1 to "...)
			b = strconv.AppendInt(b, p.Configured().Capacity(), 10)
			b = append(b, " as configured)."...)
		}
	}
	b = append(b, `","violated-policies":[`...)
	first = true
	for i := 0; i < res.Len(); i++ {
		if res.Decision(i).Allowed {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, res.Policy(i).Name()...)
		b = append(b, '"')
	}
	b = append(b, "]}\n"...)
	h := w.Header()
	h.Set(HeaderRetryAfter, strconv.FormatInt(retry, 10))
	writeProblem(w, http.StatusTooManyRequests, b)
}

// rejectKey answers a request a policy found no key for: 400 or 403.
func (m *Middleware) rejectKey(w http.ResponseWriter, r *http.Request, res *Result, e *policy.KeyError) {
	status := e.Action.Status()
	if m.onReject != nil {
		m.onReject(w, r, Rejection{Status: status, Err: e, Result: res})
		return
	}
	b := appendBlank(nil, status)
	b = append(b, `,"detail":"The request does not identify the client for rate-limit policy `...)
	b = append(b, e.Policy.Name()...)
	b = append(b, `."}`+"\n"...)
	writeProblem(w, status, b)
}

// rejectCost answers a request whose cost some policies can never admit:
// 429 without Retry-After, since waiting does not help, and without
// rate-limit fields of this middleware, since none of its policies decided
// it (a middleware further out that admitted it wrote its own). (A cost above a lowered
// limit that the configured one holds is a denial, answered by deny, but
// with a store that cannot peek: see policy.Result.Take.) "violated-policies"
// names every such policy, in Set order, and the detail gives each one's
// capacity: "The request costs 20 units; policy a admits 1 to 10, policy
// b admits 1 to 5.", or, when the policies charge it differently, each
// cost too ("The request costs 20 units under policy a, which admits 1 to
// 10; 40 units under policy b, which admits 1 to 30.").
func (m *Middleware) rejectCost(w http.ResponseWriter, e *policy.CostError) {
	same := true
	for _, o := range e.Others {
		same = same && o.Cost == e.Cost
	}
	b := append([]byte(nil), `{"type":"`...)
	b = append(b, m.problemType...)
	b = append(b, `","title":"Too Many Requests","status":429,"detail":"The request costs `...)
	first := true
	for p, cost := range e.All() {
		switch {
		case same && first:
			b = strconv.AppendInt(b, cost, 10)
			b = append(b, " units; policy "...)
		case same:
			b = append(b, ", policy "...)
		default:
			if !first {
				b = append(b, "; "...)
			}
			b = strconv.AppendInt(b, cost, 10)
			b = append(b, " units under policy "...)
		}
		first = false
		b = append(b, p.Name()...)
		if same {
			b = append(b, " admits 1 to "...)
		} else {
			b = append(b, ", which admits 1 to "...)
		}
		b = strconv.AppendInt(b, p.Capacity(), 10)
	}
	b = append(b, `.","violated-policies":[`...)
	first = true
	for p := range e.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, p.Name()...)
		b = append(b, '"')
	}
	b = append(b, "]}\n"...)
	writeProblem(w, http.StatusTooManyRequests, b)
}

// unavailable answers 503, with Retry-After when retry > 0 (whole
// seconds); err says why.
func (m *Middleware) unavailable(w http.ResponseWriter, r *http.Request, res *Result, retry int64, err error) {
	if m.onReject != nil {
		m.onReject(w, r, Rejection{Status: http.StatusServiceUnavailable, RetryAfter: wholeSeconds(retry), Err: err, Result: res})
		return
	}
	if retry > 0 {
		w.Header().Set(HeaderRetryAfter, strconv.FormatInt(retry, 10))
	}
	b := appendBlank(nil, http.StatusServiceUnavailable)
	b = append(b, "}\n"...)
	writeProblem(w, http.StatusServiceUnavailable, b)
}

// wholeSeconds returns n seconds as a Duration, or the longest Duration
// when they do not fit one (a FailClosed wait near the longest Duration,
// rounded up).
func wholeSeconds(n int64) time.Duration {
	if n > math.MaxInt64/int64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// A Rejection is a refusal other than a denial's 429 (see
// [WithDenyHandler]), as the handler of [WithRejectHandler] is given it.
type Rejection struct {
	// Status is the status of the default response: 400 or 403 for a
	// request a policy finds no key for (policy.OnKeyError), 503 for a
	// store failure under FailClosed, for a leaky_queue hold that the
	// request's context ends (or would end, its deadline coming before
	// its turn), and for a request whose context ended while it was
	// decided (its client gone, or a server-side deadline run out).
	Status int
	// RetryAfter is the default response's Retry-After, in whole seconds
	// (the middlewares further out included, as for a 429; the longest
	// Duration when they do not fit one); 0 when it has none (400, 403, a
	// client gone). A request whose server-side deadline
	// ran out while the store decided it waits FailClosed's retryAfter,
	// at least 1 s. (Shadow mode rejects none of these; see [WithShadow].)
	RetryAfter time.Duration
	// Err says why: the *policy.KeyError (400, 403); the store's error
	// (503 under FailClosed; [ErrBreakerOpen] when the circuit breaker
	// kept the store from being called); for a leaky_queue hold, an error
	// wrapping the context's (context.DeadlineExceeded, context.Canceled);
	// for a request whose context ended while it was decided, the
	// store's error.
	// Its text is not meant for the client.
	Err error
	// Result is the request's Result as far as it went: no decisions for
	// a missing key or a store failure (Result.Taken is false); for a
	// leaky_queue hold, the decisions, its place given back when the
	// store's refund succeeded (Result.Refunded), else as taken. The
	// rate-limit headers already set on the response are those the
	// default response sends.
	Result *Result
}

// appendBlank appends an about:blank problem object for status, without
// its closing brace.
func appendBlank(b []byte, status int) []byte {
	b = append(b, `{"type":"about:blank","title":"`...)
	b = append(b, http.StatusText(status)...)
	b = append(b, `","status":`...)
	return strconv.AppendInt(b, int64(status), 10)
}

// writeProblem answers status with a problem+json body. A Content-Encoding
// already set is a compressing middleware's further out, which encodes what
// we write (as gorilla/handlers' CompressHandler does): it is kept, and the
// Content-Length of the unencoded body is not sent (http.Error keeps it
// too, golang/go#66343).
func writeProblem(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ContentTypeProblem)
	h.Set(HeaderCacheControl, "no-store")
	if _, encoded := h["Content-Encoding"]; encoded {
		h.Del("Content-Length")
	} else {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
