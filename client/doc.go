// Package client is the outbound side of ratekeeper: an http.RoundTripper
// that calls other services politely. Where the middleware protects a
// server from its clients, [Transport] protects the servers a program calls
// — a third-party API limited to 5 requests per second, say — from that
// program:
//
//   - it queues requests rather than failing them: with [WithRate], requests
//     to one host (or any key of [WithKey]) leave at the configured rate
//     through a leaky_queue, each waiting its turn, up to a maximum wait;
//     every spelling of a host that reaches the same server shares one
//     queue ([HostKey]: case, default port, a port's leading zeros,
//     trailing dot, IPv6 form, and an internationalised name in Unicode or
//     punycode);
//   - it backs off when turned away: a 429, 503 or 529 (Anthropic's
//     "overloaded", retried as a 503 is; or a 403 that refuses
//     the request for its rate, as GitHub's do: one with a Retry-After
//     asking for a wait, or rate-limit headers saying no quota is left
//     until a reset still to come) is retried after the
//     server's Retry-After (or its millisecond forms retry-after-ms and
//     x-ms-retry-after-ms, read first; a Retry-After in decimal seconds,
//     "1.5", which RFC 9110 does not allow but some servers send, is read
//     as that wait, rounded up to the nanosecond, never shorter than
//     asked; one asking for no wait, 0 or a date past, gets the backoff
//     unless another form asks for a wait; without one that does,
//     bucket4j's X-Rate-Limit-Retry-After-Seconds, whole seconds cut
//     down, to the end of the second it names),
//     or an exponential backoff with full
//     jitter, no shorter than the reset its rate-limit headers announce, a
//     bounded number of times, and only when the request can be replayed
//     and the refusal leaves it a chance: one whose rate-limit fields say
//     the request costs more than the quota (go-chi/httprate's
//     X-RateLimit-Increment above its X-RateLimit-Limit) is given up on at
//     once; a redirect's Retry-After (RFC 9110: the wait before the
//     redirected request) is waited out too, within the same bounds;
//   - it listens before it is turned away: when a response's rate-limit
//     headers say no quota is left, further requests wait for the announced
//     reset. It reads the IETF RateLimit fields (draft -11 back to draft-6),
//     X-RateLimit-* (GitHub and many more, with Discord's relative
//     X-RateLimit-Reset-After) and X-Rate-Limit-* (the X API), and
//     OpenAI's x-ratelimit-*-requests and Anthropic's
//     anthropic-ratelimit-requests-* request quotas; not their token quotas,
//     since it cannot know what the next request costs in tokens.
//
// When several signals are present: a Retry-After (the server's word on
// this refusal) wins over every rate-limit field, unless it asks for no
// wait (0, a date past: the fields then say how long), and among its
// forms the most precise that asks for a wait (retry-after-ms, then
// x-ms-retry-after-ms, then Retry-After, then
// X-Rate-Limit-Retry-After-Seconds: one asking for no wait hides none
// that asks for one); the rate-limit fields of every dialect are all read, since
// each may describe a different limit, and the longest hold wins. No
// header, however malformed or large, holds a request for longer than
// [WithMaxRetryAfter] or makes it wait beyond [WithMaxWait]: a malformed one
// is ignored, and a server asking for more than the maximum is given up on
// at once. Nor does the hold so cut end in a burst of requests the server
// said it would refuse: until the end it announced, the requests of its key
// go out one at a time, each a probe whose answer the others wait for, and
// all go on once one is admitted or asked for a wait no longer than the
// maximum (see [WithProactive]; a maximum of 0 honours no wait, and keeps
// no probe).
//
// A field may come in several lines: a gateway and the application behind
// it may each write their own. RateLimit and RateLimit-Policy are Lists,
// whose lines make one List (RFC 9110 §5.3), and draft-7's RateLimit one
// Dictionary, in which an empty line or member is no member at all (RFC
// 9110 §5.6.1), not a malformed field; a RateLimit whose lines (or the
// members of a line) mix the two, each layer writing its own draft, is
// read member by member, each in the syntax it parses in, and the longer
// hold of the two counts. Every other field is read line by
// line, skipping invalid lines, and cautiously: a Retry-After (in each of
// its forms) or a reset is the longest wait of its lines, no quota is left
// when any line of a remaining count says so, and a quota's size is the
// smallest of its lines. A proxy may have joined the lines into one, with
// commas, so each member of a line counts as a line of its own, but in a
// Retry-After, Anthropic or legacy (X-RateLimit-Reset, X-Rate-Limit-Reset)
// reset line that is one instant (an HTTP-date, whose day name a comma
// follows, also among the members of a joined Retry-After line; Go's RFC
// 3339 parser takes a comma before a fraction of a second); a line of a
// plain field that is one
// number with thousands separators ("1,000") is that number. draft-6's
// RateLimit-Remaining and RateLimit-Reset, Integers that RFC 9651 would
// have ignored whole in several lines, are read member by member too
// (there "1,000" is the members 1 and 0). Date lines that disagree count an
// absolute time from the one that makes the wait longest.
//
// The queues live in an [algorithms.Store]: a private in-memory one by
// default, or a shared Redis store ([WithStore]) so that a fleet of
// instances paces together. Every wait goes through a [Clock] and honours the
// request's context.
//
// # Example
//
//	t, err := client.New(nil, client.WithRate(5, time.Second), client.WithMaxWait(30*time.Second))
//	if err != nil {
//		return err
//	}
//	hc := &http.Client{Transport: t, Timeout: time.Minute}
//	resp, err := hc.Get("https://api.example.com/v1/things")
//
// # Choices
//
// When it gives up on a request the server keeps refusing, the Transport
// returns the last refusal (429, 503, 529, rate-limited 403) with a nil error, as the
// http.RoundTripper contract asks; [WithGiveUpError] returns a [*RetryError]
// (attempts, last status) instead. A request whose wait would exceed the
// maximum, or outlast its context's deadline, fails at once with a
// [*WaitError], before anything is sent (one waiting for the answer of a
// probe, see [WithProactive], when its maximum wait ends; a retry so
// refused is a give-up instead: see [Transport.RoundTrip]). A
// request that gives up its place in the queue (its context ended) gives it
// on: with proactive pacing (the default) the requests behind it move up,
// and the last place goes back to the store when nothing queued there
// behind it; without, its own place goes back to the store on that same
// condition, and the requests behind it keep theirs (see [Transport]).
package client
