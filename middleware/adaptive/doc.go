// Package adaptive moves the limits a middleware enforces with the state of
// the service and of the fleet, without a restart.
//
// A [Controller] lowers limits when the service is in trouble and restores
// them when it recovers. It watches the latency (the service's own time,
// see "What is measured") and status of the requests the service handles
// over observation periods: the middleware feeds it
// the requests it passes on, and tells it of those it answers itself
// (m.SetFeedback(ctrl), see middleware.Middleware.SetFeedback and
// "Periods no request judges"); or wrap the application with
// [Controller.Handler], inside the rate limiter; or call
// [Controller.Observe]. When a period's p99
// latency exceeds LatencyFactor (2) times the baseline AND its error rate
// (5xx) exceeds ErrorRate (1%), the effective limit of every controlled
// policy drops to Decrease (80%) of its current value, never below Floor
// of the configured limit. It climbs back by Step (at most 10%) of the
// configured limit for every StablePeriods healthy periods in a row (one
// step per period by default), up to the configured limit. A period with
// only one of the two signs holds the limit where it is; a learned
// baseline follows a p99 that settles higher, without errors, within a
// few periods (see Config.Baseline), so that it stops holding it.
//
// A [Fleet] shares a cluster-wide limit among the instances of a service
// without a shared store: each instance enforces the configured limit
// divided by the number of instances, which a function reports (the
// Kubernetes API, a service registry), re-read by a Check at most once per
// FleetConfig.Every, and on demand.
//
// # How the limit reaches the requests
//
// A Controller sets the effective limit through the middleware's SetLimit
// (a Fleet through SetLimitUnguarded, see below), which
// swaps in a rule set whose policy carries the new Spec.Limit (atomically:
// a request is decided under one rule set). The stores key their state by
// Spec, so a new limit's counters start from a full allowance; to keep a
// change of level from handing clients a fresh quota, a lowered policy is
// guarded by its configured Spec (see middleware.Middleware.SetLimit and
// policy.Policy.Guard): each request is also counted under the configured
// Spec, whose counters no change of level resets, and admitted only when
// both allow it. For a window kind (fixed_window, sliding_window,
// sliding_log, sliding_buckets), whose counters count requests whatever
// the limit, the configured Spec's are judged at the level in force
// (policy.Policy.GuardLimit): within a window no client gets more than
// the level in force, counting everything it used in that window, however
// many levels it goes through. A client that used 60 of its 100 per
// minute gets 20 more when the level drops to 80%, one that used 80 or
// more none, and each 80 in the next minute; one that used 80 at 80% gets
// 10 more in that window when the level climbs to 90%. For token_bucket,
// leaky_bucket and leaky_queue, whose state is a function of their rate,
// the configured Spec is checked at the configured limit: within one
// window no client gets more than the configured limit, however many
// levels it goes through, and between two lowered levels the counters of
// the new one start afresh and the guard's bound the client: one that
// used 80 at 80% may use 20 more when the level climbs to 90% (up to the
// configured 100). A lowered policy of a window kind costs no more per
// request than an unlowered one: the configured Spec's counters, judged at
// the level, decide it alone (one check); one of the other kinds costs a
// second check per request (in the same store call). The alternative of
// scaling
// costs under an unchanged Spec cannot express 80% with integer costs. A
// level is a whole number of thousandths of the configured limit, from
// Floor to 1: a drop multiplies it by Decrease, a step adds Step, so the
// levels visited are not a fixed grid (1, 0.8, 0.64, then 0.74, 0.84,
// 0.94, 1). Going back to a level visited before finds its counters again
// while the store still holds them, and back at the configured limit, its
// counters hold every request admitted meanwhile.
//
// A Fleet sets its shares through the middleware's SetLimitUnguarded. A
// share of a window kind is judged on the configured Spec's counters, as
// a Controller's level is (one check per request): whatever the count of
// instances goes through, within a window one instance admits a client no
// more than the share in force, counting everything counted under the
// policy in that window (6 and then none of a cluster-wide 12 as the count
// goes from 2 to 3 to 4; 6 and then 6 more when it falls to 1). Counted
// includes requests a middleware further out on the same policy counted
// and this one refused (see middleware.ErrCountedTwice), so a share that
// rises within the window finds them there; a reload that raises the
// limit is judged on the replaced limit's counters too (a client that
// used its share of 6 gets 6 more of a share raised to 12), but for a
// sliding_log, which starts afresh (see
// middleware.Middleware.SetPolicies). A share of a bucket
// kind is not guarded: a share stays in force as long as the number of
// instances does, and a guard at the cluster-wide limit would bind only
// in the window of a change of the count, at the cost of a second check
// on every request. In that window the counters of the new share start
// afresh, so a client may get from one instance every share it held
// there, added up: its old share and its new one when the count grows
// once from two or more (never more than the cluster-wide limit), but 6,
// 4 and then 3 of a cluster-wide 12 as the count goes from 2 to 3 to 4
// (13). When the count falls to one, the configured limit comes back on
// the configured Spec's counters, which counted none of the requests
// admitted under a share: a client may get its share and the whole limit
// then (6 and then 12 from 2 to 1). A reload that lowers a cluster-wide
// limit, or tightens it otherwise (a lower burst, a longer window: see
// middleware.Middleware.SetPolicies), hands out no such fresh share: the
// share it carries over in proportion is guarded, for two windows or so,
// by the Spec whose
// counters hold the requests of the old share (the share's own for a
// bucket kind, the configured one replaced for a window kind; see
// middleware.Middleware.SetPolicies). For a window kind whose limit
// alone the reload changes, that guard is judged at the new share, so
// that in the window of the reload an instance admits a client no more
// than its new share, counting what it used of the old one: one that used
// 40 of a share of 100 gets 10 more when a reload halves the cluster-wide
// limit (the share carried over at 50). For the bucket kinds it is
// checked at the old share: no more than its old share, nor more than its
// new one since; for a window kind whose window or buckets the reload
// changes too, at the replaced cluster-wide limit: no more than that, nor
// more than the new share since.
//
// # What is measured
//
// The latency of a request fed by Controller.Handler or the middleware's
// SetFeedback is the time its handler spends on its own: from the call to
// the return, less the time it waits on its client, reading the request
// body (or closing it, which drains what is left of it) and writing,
// flushing or copying (ReadFrom) the response. Those waits are the
// client's: a client that trickles its uploads or reads its responses
// slowly holds its requests open as long as it likes, and its requests
// would otherwise be as slow as it pleased. A handler that copies a
// source to the response (io.Copy) reads it in its own time (a backend's
// body), but for a file or a connection, which net/http may send through
// the kernel (sendfile, splice): that whole copy is a wait, so a slow
// disk under it is not seen. Nor is a network the server saturates
// itself: a write blocked there is taken for a slow client's. The waits
// of a request's other goroutines (a reverse proxy's transport reading
// the body while the handler writes) count once where they overlap. A
// handler that buffers its response (http.TimeoutHandler inside the
// Controller's view) writes into the buffer in its own time; the copy of
// the buffer to the client is the wait (but see "What clients can do to
// it" for a timeout a client runs out). A request is not in flight (see
// below) while it waits on its client: it is in flight from its beginning
// until its first wait, then from the end of each wait to the next. (A
// caller of Observe of its own measures as it likes.)
//
// # Requests that do not return
//
// A backend that hangs answers nothing: judged on the requests that end
// alone, the periods of a hang would have no samples, count as quiet and so
// healthy, and the level would climb back to the configured limit while the
// service is stuck, letting more requests in. So a Controller also counts
// the requests in flight (Controller.Begin, which Controller.Handler and
// the middleware's SetFeedback call as each request begins, and again as
// each wait on its client ends; a caller of Observe of its own may too). A
// request in flight at a period's end that began (or ended its last wait on
// its client) more than LatencyFactor times the baseline before it is a
// sample of that period over the threshold, of no status yet, in every
// period it is still in flight at the end of; the error rate is judged on
// the requests that ended, and a learned baseline learns from them alone
// (see Config.Baseline): a hang does not become the normal. A period with
// MinSamples such requests and samples is slow: it holds the level, and
// lowers it when the requests that ended are failing (a proxy's timeouts).
// The periods that pass with no request beginning or ending hold it too
// from the first whose end finds at least MinSamples requests known over
// the threshold in flight, as a ticker's [Controller.Evaluate] at each
// period's end would. A request begun after a period's end judges it, as
// one that ends does, or one that stops being in flight (its client gone,
// a wait on its client begun), before it stops: a hang is seen as new
// requests arrive (those the middleware refuses too, see "Periods no
// request judges"), as its own end or leave, or at a ticker's Evaluate.
// (But for one that stops while another request's evaluation of the
// period is under way: it does not wait for it, and is no sample of the
// period if that evaluation, paused (a VM pause), counts the requests in
// flight after it stopped. Its latency is observed, in the period it
// ends in.)
//
// Long-lived requests are requests in flight too: a stream (server-sent
// events, long polling) waits for its events in its handler's own time,
// so one that goes longer than the threshold without writing is a slow
// sample of each period end it spans that way, MinSamples of them at once
// hold the level for as long as they last, and each is a slow sample as
// it ends. Keep such routes out of the Controller's view: wrap only the
// other routes with Controller.Handler rather than setting the
// Controller as the Feedback of a middleware in front of them all. (A
// large download to a slow client is no such request: its time is spent
// writing, waiting on the client. A request whose handler hijacks its
// connection, a WebSocket's, is over as it does.)
//
// # Periods no request judges
//
// A Controller judges the periods that ended as it hears of a request
// (one that begins or ends, or one refused), or at [Controller.Evaluate].
// Fed by the middleware (m.SetFeedback(ctrl)), it hears of the requests
// the middleware passes on and of those it answers itself, denied,
// rejected for want of a key or refused with a 503 ([Controller.Refused]):
// these judge the periods that ended, as Evaluate would, without being
// samples or in flight. So once a lowered level denies every request, as
// it does when the requests share one key (a policy keyed by route) or
// come from one client, and that key has used the lowered limit of its
// window, the first request of each period, denied, judges the one that
// ended, and the level climbs back period by period while the service
// stays healthy, as a ticker's Evaluate at each period's end would raise
// it; the request that judges them is decided at the level in force
// before it, the next one at the level raised. After a gap without any
// request, the first one judges the periods of the gap as the ticker
// would have (healthy, unless requests in flight hung), and is itself
// decided at the level in force before.
//
// A Controller that hears only of the requests passed on still waits for
// one: one wrapped around the application inside the limiter
// ([Controller.Handler]), or fed by Observe of your own, or by a
// middleware nested inside another that does the refusing (a middleware
// tells its own Feedback of the requests it answers, not those an outer
// one refused). While none is passed on, no period is judged, and the
// level stays where it is however long the service has been healthy: in
// the cases above, until a request passes again at the end of the
// policy's window (an hour, for a policy per hour). There, call Refused
// where the requests are refused (in a handler of your own in front of
// the middleware: see the example of middleware.Middleware.SetFeedback),
// or Evaluate from a ticker of Period:
//
//	go func() {
//		t := time.NewTicker(time.Minute) // Config.Period
//		defer t.Stop()
//		for {
//			select {
//			case <-ctx.Done():
//				return
//			case <-t.C:
//				ctrl.Evaluate()
//			}
//		}
//	}()
//
// A Fleet needs no such call: it is no Feedback, and its Check has no
// such gap when [Fleet.Handler] is around the limiter, where every
// request checks before it is decided, the denied ones too.
//
// # Requests whose client leaves
//
// A request whose client went away before its handler ended (a mobile
// network dropping, a load balancer giving up to retry elsewhere, a page
// closed) is not observed, whatever its handler answered: net/http
// cancels its context (context.Canceled, with no other cause) as the
// connection closes or the HTTP/2 stream is reset, or as a read from the
// connection or a write to it fails (a client gone mid-upload, the
// server's ReadTimeout passing on a trickled one), and what the handler
// does then (a 500 for a query that returned context.Canceled, a reverse
// proxy's 502) reaches no one, while its latency is mostly how long the
// client waited. So a burst of clients hanging up neither counts as
// errors nor pulls the p99 down with samples cut short, and cannot lower
// every client's limit. (Netflix's concurrency-limits ignores a call its
// client cancelled in the same way, and Envoy's adaptive concurrency
// takes no latency sample of a request reset before its response ended.)
// It is in flight while its handler runs, as any request is: a handler
// that goes on past the threshold after its client left is a slow sample
// of each period end it spans (see above).
//
// A request whose server-side deadline ran out (http.TimeoutHandler, a
// timeout middleware: context.DeadlineExceeded) is observed, with what its
// handler answered: it ran out of the time the server gives it. So is one
// whose context the application cancelled with a cause of its own
// (context.WithCancelCause), one whose handler spent at least the server's
// http.Server.WriteTimeout on its own, not waiting on its client (over
// HTTP/2, net/http enforces it by resetting the stream and cancelling the
// context as a client's reset does; over HTTP/1 a write past it fails,
// which cancels the context too), and one its handler answered before the
// client left. One whose WriteTimeout passed while its handler waited on a
// slow client is not observed: the client ran it out (a reverse proxy
// panics when its copy to such a client fails, which would have been a slow
// 500). Clients that give up on a slow service hold the level (their
// requests in flight past the threshold are slow samples) but do not lower
// it; for a slow service's timeouts to lower it, give its requests a
// server-side deadline shorter than the clients' patience: those that run
// out are judged by the errors they end in.
//
// # What clients can do to it
//
// The signals are the responses to the clients' own requests, so a
// client can move them. In a period of fewer than 100 requests (and at
// least MinSamples), one request answered slowly and with a 5xx (an
// expensive query that times out, a method the handler answers 501) is
// enough: it is more than 1% of them, and so is its latency above the
// threshold p99 is judged by. One client, within its own limits, can so
// lower the limit of every client of the controlled policies of a quiet
// service. Keep the per-client policies tight, set IsError to count only
// the failures that are the service's (not a 501 a client asks for), and
// a MinSamples one client's share of a period cannot reach alone. A
// level change gives no client more than the configured limit in a window
// (see above). A client that keeps MinSamples requests in flight past the
// threshold in the service's own time (long polls, requests the service
// is slow to answer) holds the level where it is (see above), but cannot
// lower it alone. Requests it gives up on are not observed (see above):
// hanging up cannot lower it either.
//
// How slowly a client sends its requests or reads its responses does not
// count (see "What is measured"): uploads it trickles and downloads it
// reads slowly are measured at the service's own time, and are not in
// flight while they wait on it, so they neither make a period slow, nor
// hold the level, nor teach a learned baseline. But a timeout of the
// application's that counts that time turns it into failures:
// http.TimeoutHandler's covers the handler's reads of the request body, so
// a client that trickles an upload past it gets its 503, a failure of the
// service's (with the Controller's view inside the TimeoutHandler, the
// deadline that ran out has whatever the handler answers then observed: a
// 500 for a body it then fails to read is one too). Such failures hold the
// level (and lower it in a period slow besides). Bound the client's time
// with the server's ReadTimeout, shorter than such a timeout: a read past
// it cancels the request, which is then not observed.
//
// A client that can keep more than 1% of a period's requests (and
// MinSamples in all) over the threshold in the service's own time, without
// errors (expensive queries within its limits), makes each period slow, and
// a learned baseline follows: an eighth of the way to the threshold a
// period, 12.5% a period at the default LatencyFactor of 2 (doubling in
// six), until the threshold passes its requests' latency. The service must
// then be that much slower for a period to be slow, and once the client
// stops the baseline comes back an eighth of the way to the p99 a period.
// That is how a baseline follows a p99 that settles higher (see
// Config.Baseline); a configured Baseline does not move.
//
// Before a learned baseline is known, one request can do more: the first
// period it is learned from sets it to that period's p99 outright, and in
// a period of fewer than 100 requests that is its slowest one. A request
// the service takes 10 s to answer without failing (an expensive query,
// or a cold cache as the service starts) among 20 sets a baseline of some
// 10 s, and healthy periods at 10 ms bring it back under 50 ms, so that a
// p99 of 100 ms is slow, only after some forty periods: until then the
// limits are not lowered. Configure Baseline, or a MinSamples of 100 or
// more, where that matters.
//
// # Request costs
//
// A limit in force below the configured one (a level's, a Fleet's share)
// is the policy's capacity while it is in force: a request that costs
// more (policy.WithCost), but no more than the configured limit, cannot
// be admitted then, though it can once the limit is back. The policy
// denies it as a request it has no room for now (see
// middleware.Middleware.SetLimit): a 429 with the policy's RateLimit
// fields at the limit in force and a Retry-After, whose problem says the
// limit is lowered ("policy upload admits 1 to 80 while its limit is
// lowered (1 to 100 as configured)"), counted and observed as a denial
// (shadow mode lets it through), consuming nothing. Its Retry-After is
// the wait after which the same request would be admitted were the
// configured limit back (at least 1 s, never before the policy's t): a
// Controller cannot say when its level climbs back, nor a Fleet when its
// count of instances falls, and a client retrying before then is denied
// again, with the wait as it stands then. An upload of 90 units of a
// policy of 100 a minute is denied so while the level is 80%, and by
// every instance of a Fleet of two. A cost above the configured limit is
// out of range whatever the limit in force (a *policy.CostError: a 429
// without Retry-After). Keep the costs a policy charges within its lowest
// limit in force (Floor of it; the share of the most instances), so that
// a change of level or of the count does not hold them back, or leave
// such a policy out of Config.Policies and FleetConfig.Policies.
//
// # Driving a policy
//
// Do not let a Controller and a Fleet (or a SetLimit of your own) drive
// the same policy: each sets its limits at its own evaluations, undoing
// the other's.
//
// A reload (the middleware's ApplyConfig or SetPolicies) carries the
// effective limit of a policy whose configured Spec changed over in
// proportion, in the same atomic swap: a policy held at 80% enters at 80%
// of its new limit (rounded down). A new policy enters at its configured
// limit. A Controller or Fleet notices new configured policies at the next
// request it sees and sets its exact limits again; to leave no gap, call
// [Controller.Apply] and [Fleet.Update] right after the reload, in the
// function given to the reloader.
package adaptive
