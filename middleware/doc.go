// Package middleware is the net/http rate limiter: it wraps any handler
// (stdlib ServeMux, chi, anything that takes func(http.Handler)
// http.Handler), evaluates the policies that apply to each request as one
// decision, and answers the requests they deny.
//
// The least it takes, 10 requests per second per client IP, counted in
// memory, around a ServeMux named mux:
//
//	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
//	if err != nil {
//		log.Fatal(err)
//	}
//	ip := keyfunc.Must(keyfunc.IP()) // behind a proxy: keyfunc.TrustedProxies
//	m, err := middleware.New(store, []*policy.Policy{
//		policy.Must(policy.PerSecond("per-second", 10, ip)),
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	log.Fatal(http.ListenAndServe("127.0.0.1:8080", m.Handler(mux))) // chi: r.Use(m.Handler)
//
// Behind a reverse proxy, such a key is the proxy's address for every
// client, all sharing one limit: the forwarding check, on by default, logs
// that once, at Warn, the first time a request carries a forwarding
// header that the key of a policy applying to it ignores, keying it by
// the peer's address (see [ErrForwardingIgnored]; the key stays the
// peer's). It asks the keys, so a key that trusts the proxy, or keys by
// no client IP (a user, an API key), is never reported; it asks the
// first about each proxy's first request, the second about 32 forwarded
// requests, and after that neither (per rule set). Declare the
// proxies to the key (keyfunc.TrustedProxies); naming them to the check
// too ([CheckForwardingFrom]) keeps it from reporting a client's own
// header, and [CheckForwarding](false) turns it off.
//
// Example runs such a middleware, Example_chi under chi; per-route limits
// are below, and package redisstore holds the store that several instances
// share.
//
// # Responses
//
// Every response to a request the policies decided carries rate-limit
// headers, allowed or not (not one a policy found no key for, nor one let
// through or refused because the store failed); by default the fields of
// the IETF draft (draft-ietf-httpapi-ratelimit-headers-11), one list
// member per policy:
//
//	RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60
//	RateLimit: "per-second";r=7;t=1, "per-minute";r=93;t=52
//
// [WithHeaders] selects the IETF fields with a RateLimit of the most
// constraining policy's member alone ([IETFMostConstraining]: RateLimit-Policy
// still lists every policy), draft-7, draft-6, legacy X-RateLimit-* (reset
// in seconds, or as a Unix time with [LegacyUnix]) or none (see [Profile]). A
// denied request gets 429 Too Many Requests, Retry-After in whole seconds
// (the longest wait among the violated policies, never before their t),
// Cache-Control: no-store and an RFC 9457 application/problem+json body:
//
//	{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
//	 "title":"Too Many Requests","status":429,
//	 "detail":"Quota exceeded for per-minute; retry in 30 seconds.",
//	 "violated-policies":["per-minute"]}
//
// A request whose cost ([policy.WithCost]) is out of the capacity of some
// of its policies is never admitted, so its 429 has neither Retry-After
// nor the middleware's rate-limit fields (no policy of it decided the
// request; a middleware further out that admitted it leaves its own): its
// violated-policies are every such policy, in order, and its detail gives
// the cost and each one's capacity. A cost above a limit lowered at run time
// ([Middleware.SetLimit], package middleware/adaptive) that the
// configured limit holds can be admitted once the limit is back: that
// request is denied as any other, with Retry-After and rate-limit fields,
// and its detail says the limit is lowered (see [Middleware.SetLimit]).
// [WithDenyHandler] replaces both responses.
//
// The rate-limit fields are set in the response's header map before the
// handler runs, so a handler that empties that map loses them. One does
// so unasked: net/http/httputil's ReverseProxy (as of Go 1.26), after
// passing on a backend's informational response (103 Early Hints), clears
// the whole map, and the final response behind it carries no rate-limit
// fields (the 103 does).
//
// A handler that adds rate-limit fields of its own, such as a
// ReverseProxy whose backend sends them, adds field lines to the
// middleware's. Under [IETF] and [IETFMostConstraining] the lines of a
// field make one list, and the client reads the policies of both. Under
// the single-valued profiles each field then carries two values, the
// middleware's first, which is not a field those drafts define (and
// draft -07's RateLimit dictionary keeps the later keys: the backend's);
// their RateLimit-Policy list holds both. The middleware does not reduce
// them to the more constraining: it would have to serve every request
// through a writer of its own to act as the status is written, an
// allocation per request. Behind such a proxy, use IETF, or have the
// proxy drop the backend's fields: wrap its ModifyResponse in
// [DropBackendRateLimitFields] (or call [DropRateLimitFields] on the
// backend response's header in a ModifyResponse of your own), and the
// client reads the middleware's fields alone, under every profile (after
// a backend's 103, as above, it reads none on the final response). The
// backend's Retry-After stays: the middleware sends none on a request it
// admits, and the backend's 429 or 503 says when it will take the retry.
//
// # Stacking and routes
//
// All the policies of one Middleware that apply to a request are decided by
// one store call, all or nothing: a request the per-minute policy denies
// does not use up the per-second allowance. Per-route limits are written
// either by wrapping (chi: r.With(strict.Handler).Post("/login", h); stdlib:
// mux.Handle("POST /login", strict.Handler(h))) or as one middleware whose
// policies carry routes ([policy.WithRoutes]), a rule table. Two nested
// middlewares make two decisions: the inner one adds its list members to
// the outer one's headers, but the outer one has already counted a request
// the inner one denies; the 429's Retry-After is then never before the
// outer one would admit the retry (a request that took its last units
// waits for them to grow). When that matters (failed logins should not use up
// the global allowance, say), put all the policies in one middleware as a
// rule table. A policy that the two share (one *policy.Policy given to
// both, or two of one name and Spec on one store), under one key, is
// decided once, by the outer one, and the inner one tells
// [ErrCountedTwice]: give policies that are to count apart distinct names,
// since the name is the policy's namespace in the store and in the
// headers.
//
// A response lists the members of the policies decided by each middleware
// the request reached, outermost first (a field line each): one that
// refuses the request ends it there, so the policies of the middlewares
// further in, which never saw it (nor know whether they apply to it),
// have no member in its 429. Of three nested middlewares, the innermost's
// 429 lists all three's, the middle one's the outer two's, the outer
// one's its own. A policy decided once for two middlewares has one
// member; so has a copy of a policy that the middleware further in
// tightened (SetLimit, a reload), reported at the copy that binds, its
// lower q and the room left there (see [ErrCountedTwice]). Not yet so
// where the copies judge at limits the other does not know: a copy
// raised further in (8 a minute under the 5 further out), one lowered
// further out by SetLimit, or one lowered in both: then each
// middleware's member stands, under the one name, and a client that
// reads the last one may count more room than is left (the 7 of the 8
// where the 5 leaves 4). An observer tells such a
// copy, which judges the count made further out, from a second request
// of the policy ([Event.CountedFurtherOut]): middleware/prommetrics and
// middleware/otelmetrics count the request allowed once, where it was
// counted, and a refusal by the copy further in as denied besides.
// Policies of one name that
// count apart (built at other Specs in each middleware) have a member
// each, under that one name, which a client cannot tell apart: name them
// apart (the inner one tells [ErrSameNameNested] once). The draft -06/-07 RateLimit-Policy list names a policy by its
// quota value, so it lists members of one quota value once (see
// [Draft7]).
//
// The route pattern is known only after routing. [http.ServeMux] sets it
// before calling the handler it routed to, so a middleware wrapping that
// handler sees it; one wrapping the whole mux needs
// [policy.ServeMuxPattern]. chi completes the pattern inside the routed
// handler: install a rule-table middleware with r.With or in the r.Use of
// an r.Group, where chi has routed. The r.Use of a router runs before that
// router routes: there the route-restricted policies apply only if the
// pattern function asks that router which route it will take:
// [WithPatternFunc] with policy.ChiPattern(r) on the top-level router, and
// with policy.ChiPattern(sub) on a sub-router (r.Route, r.Mount), where
// without it the pattern is the mount's "/api/*" and they never apply (or
// put the middleware in an r.Group inside the sub-router).
//
// A route that the router does not have ("POST /logn" for "POST /login",
// "/api/{id}" for chi's "/api/{ID}") is valid, and its policy never
// applies, silently: every request has a known route, none of them that
// one. [Middleware.CheckRoutes], called once the routes are registered,
// asks the router (policy.ServeMuxPattern(mux), policy.ChiPattern(r) of
// the top-level router r, even for a middleware in a sub-router, whose
// own pattern function knows the mount only while serving a request)
// where a request built from each route of the policies goes, and
// returns an error ([ErrUnknownRoute]) naming every route no such request
// reaches, and where the router sends it; with chi, which reports "/x"
// and "/x/" as one pattern, two policies' routes it cannot tell apart
// ("GET /x", "GET /x/") are an error too ([ErrIndistinctRoutes]):
//
//	if err := m.CheckRoutes(policy.ChiPattern(r)); err != nil {
//		log.Fatal(err)
//	}
//
// # Failures
//
// A key a policy cannot extract rejects the request with 400 or 403, or
// leaves that policy out, per policy ([policy.OnKeyError]). A failing store
// lets requests through by default ([FailOpen]); [FailClosed] answers 503,
// [FallBack] decides with another store; a circuit breaker stops calling a
// store that keeps failing ([WithBreaker]). Every failure is counted
// ([Middleware.Stats]) and passed to [WithErrorHandler]; no error text
// reaches the client.
//
// # Queues
//
// A leaky_queue policy admits a request with a Delay; the middleware holds
// the request that long ([WithWait]) and then passes it on. A key holds
// no more of a queue's requests at once than its capacity less one (the q
// of its RateLimit-Policy member, floor(MaxDelay·Limit/Window) + 1 places
// for requests of cost 1, the first passing at once); those past it are
// answered 429. Each key has its own queue, so a client rotating keys (the
// /64s of its IPv6 prefix, values of a header) holds that many per key: to
// bound the requests held in all, stack a leaky_queue policy with a
// coarser key (a network, or keyfunc.Global) beside it. A held request's
// rate-limit headers are set when the hold ends, so that their delta-seconds (t,
// reset) count from the response they leave with: the decision's, less the
// time held, never below 0. A client that
// goes away while held frees the goroutine at once, and its place in the
// queue goes back to the store ([policy.Result.Refund]) when the store is an
// [algorithms.Refunder] (both of this module's are) when no later request
// queued behind it (x/time/rate's rule for a cancelled reservation), since
// moving a queue back under waiting requests would send two at once. The
// store tells the last place from the time the request waited, within half
// a queue spacing (see Refunder). Other places, and the other policies'
// units, stay spent. A request whose context has a deadline at or before the end
// of its Delay (a server-side timeout shorter than the queue) is not held:
// it is answered 503 with Retry-After at once, and its place goes back the
// same way; one whose deadline comes during the hold (the wait ran late)
// is answered the same when it comes, Retry-After the time left to its
// turn (or longer, while a middleware further out that admitted it with
// its last units would refuse the retry). The 503 of a refunded request reports each leaky_queue policy as
// the store has it after the refund ([algorithms.Refunded]): its place
// given back, or kept with the later requests queued behind it counted,
// the times counted from the refund; the other policies as their decision
// left them. When the refund failed, or the store is not a Refunder, the
// headers report the decisions as they were, the place counted. Nested
// middlewares hold a request in turn, each for the Delay of its own
// leaky_queue policies, decided as the request reaches it, so that their
// holds add up (a policy they share is held for once, further out: see
// [ErrCountedTwice]); each checks its own Delay against the request's
// deadline, and gives its own place back when its hold is cut short. A
// place taken further out stays taken when a middleware further in
// refuses the request, or its hold there is cut short (the request has
// left that queue), as a window kind's units stay counted, unless the
// policy's count gives it back ([policy.CountIf]). An
// [Observer] is told, with the outcome of a held request, how long it was
// held ([Event.Held]; Event.Latency leaves the hold out), and the metrics
// packages (middleware/prommetrics, middleware/otelmetrics) export it as a
// histogram per policy.
//
// # Counting only some responses
//
// A policy built with [policy.CountIf] counts only the admitted requests
// whose response its count accepts ([policy.CountFailed]: a login limit
// that counts failed attempts only). The middleware then serves the
// request through a writer that records its status (keeping the
// writer's Flusher, Hijacker, io.ReaderFrom, Pusher and CloseNotifier, and
// Unwrap for http.ResponseController), and once the handler has returned, or
// panicked (status 500), gives back to the store that decided it the
// units of the policies whose count says no ([policy.Result.GiveBack],
// [algorithms.GiveBacker]: [New], [Middleware.SetPolicies] and
// [Middleware.ApplyConfig] refuse such a policy over a store, or a fallback
// store, that is not one, as a wrapper forwarding Take alone is not,
// rather than count every response); a client gone before the status reads 499, a
// hijacked connection 101. The request counts until then: concurrent
// requests see it counted, and its own headers, which go out with the
// handler's status before it returns, report it counted. Where the
// headers are still unsent when the units come back, the IETF RateLimit
// line reports them back, as the store has them after the give-back: a
// handler that wrote nothing (net/http sends its 200 once it returns), and
// a refusal by a middleware further in (its 429, 503, 400 or 403, or its
// deny or reject handler's response), whose status is final: the units of
// the policies that do not count it come back as it is written, before
// its headers go out. The single-valued profiles (Draft7, Draft6, Legacy,
// LegacyUnix) report the values as they were set: those of one policy,
// chosen among the decisions of every middleware the request passed.
// [Stats].GivenBack counts these requests. A request shadow mode let
// through denied consumed nothing and gives nothing back.
//
// Such a middleware and the ones nested further in share the request's
// state: a middleware further in reads its decisions and header values,
// and tells it of a refusal. Once it has passed the request on, the
// middleware writes neither: it gives back on a copy of its Result, and
// edits its header lines through a copy of its values, taken as its
// status is written or its handler has returned (on one goroutine, once
// the middlewares further in have written theirs); the mark of a refusal
// is written and read atomically. So a handler between it and a
// middleware further in may serve the rest of the chain on a goroutine
// of its own and answer without waiting for it (http.TimeoutHandler once
// its time is up, a handler that goes on with the work in the
// background): the inner middleware then sees the decisions of the outer
// one as they were when the request was passed on, its units counted
// even once they came back (its headers, and the wait for the outer one
// its refusals count in their Retry-After, report them so), and writes
// its headers to the writer it is handed (which TimeoutHandler discards
// once its time is up). The outer middleware gives back for the status
// its own writer was given (TimeoutHandler's 503, the detaching
// handler's answer), not the inner one's; a refusal further in marked
// before that status is written makes it give back as the status is
// written, its IETF line reporting the units back, and otherwise once
// its handler has returned, its headers having gone out as they were
// (TestInnerMiddlewareOnDetachedGoroutine, TestCountIfOuterTimeoutHandler,
// run under -race). One case still races, a known defect that the race
// detector reports (the same test's cases of a middle middleware, with
// RATEKEEPER_KNOWN_DEFECTS=1): a middleware that shares the name of a
// policy with one further out makes their IETF members one as its
// status is written, editing the header values of that one, which a
// middleware further in, on such a goroutine, may be reading. Name their
// policies apart, or put such a handler outside them, or inside the
// innermost middleware.
//
// # Operations
//
// [FromConfig] builds a middleware from a configuration file loaded by
// [policy.Load] (policies, header profile, failure mode; see
// [ConfigOptions]). The policies can be replaced while the middleware
// serves: [Middleware.SetPolicies] and [Middleware.ApplyConfig] swap in a
// new immutable rule set atomically (each request is decided under the one
// it started with; requests take no lock), and package policy/reload calls
// ApplyConfig whenever the file changes. Policies whose name and Spec did
// not change keep their counters. [Middleware.SetLimit] changes the limit
// of one policy the same way; package middleware/adaptive uses it to lower
// limits while the service is unhealthy, and [Middleware.SetLimitUnguarded]
// to divide a cluster-wide limit among instances. A middleware an application discards for another (one
// built anew for a setting ApplyConfig cannot change in place, sharing its
// observers) is to be closed ([Middleware.Close]): its failure State then
// leaves its observers' failure_state gauges, which would otherwise keep a
// State its store failed into for ever, and the limits it is still set
// (by an adaptive Controller its last requests feed) no longer reach the
// limit gauges the middleware replacing it reports.
//
// An [Observer] ([WithObserver]) is told the outcome and decision latency
// of every request, changes of the failure [State] and of effective
// limits: package middleware/prommetrics exports them to Prometheus,
// package middleware/otelmetrics through OpenTelemetry, and
// [WithLogger] logs them with log/slog, rejections (and the holds of
// leaky_queue policies: the time each request was held, at Debug, or at
// Info when the hold was cut short) sampled so that an
// attack cannot flood the log, each client named by a keyed hash of its
// key (the pk of the headers, see [LogPartitionKey]), never by the key,
// which may hold a credential or personal data, and each request by its
// route pattern, not by its path, which may hold them too ([LogRawKeys]
// and [LogRawPaths] opt in). Without an observer the
// middleware pays one nil check per request, and logs only the changes of
// its failure State and, once, a store found closed
// ([algorithms.ErrClosed]), on [log/slog.Default] (see [WithLogger]), so
// that a store failing open, or closed too early, does not lift the limits
// unseen; an observer is told of them instead. So are its once-only setup warnings (a policy with
// routes that never applies, [ErrUnrouted], not told for a 404 a pattern
// function found no route for; [ErrForwardingIgnored], the forwarding
// check being on by default; [ErrCountedTwice]), when it has no error
// handler either.
//
// # Cost
//
// Handlers downstream find the decision, read-only, with [FromContext]:
// to carry it, the middleware passes on a copy of the request with its own
// context, one allocation per request (the request copy and the
// [Result], with room for the policies that apply: 704 bytes with one
// policy, up to 1,280 with four), which is most of what the middleware
// costs. That allocation
// also holds the checks' keys, each namespaced as the policy's name, a
// colon and the key, when they fit: 56 bytes in all with one policy, 104,
// 88 and 72 with two, three and four; longer keys cost one allocation
// more. A service that
// does not read the decision downstream can drop it with [WithoutContext]:
// the request then goes on as it came and the middleware allocates only
// its header values. What the handler sets on the copy (its forms, a
// router's pattern and path values) is given back to the request the
// middleware was handed once the handler returns, for some comparisons;
// the path values of a route with wildcards go into a map of that request,
// which net/http allocates (see [Middleware.Handler]).
package middleware
