// Package algorithms holds the rate-limiting contract — [Spec], [Check],
// [Decision], [Store], [Clock] — the seven algorithms as exact, pure state
// transitions, and [MemoryStore], the in-memory store that is the default.
//
// # Semantics
//
// Times are nanoseconds. L is Spec.Limit, W is Spec.Window, B is the
// capacity ([Spec.Capacity]) and n the cost of the request (n >= 1). A denied
// request consumes nothing. Every computation is exact integer arithmetic
// (128-bit where products need it): there is no floating-point drift at
// window boundaries.
//
//   - fixed_window: one count per window k = floor(t/W), windows aligned to the
//     Unix epoch. Allowed when count+n <= L. Two windows meeting at a boundary
//     can admit 2L in a short span.
//   - sliding_log: the timestamps of accepted requests. Allowed when the cost
//     accepted at instants ts >= t−W, plus n, is at most L: a request exactly W
//     old still counts. Memory grows with the requests in a window (at most L
//     entries per key).
//   - sliding_window: the counts of windows k−1 and k (the Cloudflare
//     counter). With e = t − kW, allowed when prev·(W−e)/W + curr + n <= L,
//     compared exactly as prev·(W−e) + (curr+n)·W <= L·W.
//   - sliding_buckets: Buckets sub-window counts of W/Buckets each, aligned to
//     the epoch. Allowed when the sum over the current and previous Buckets−1
//     sub-windows, plus n, is at most L. One bucket is the fixed window.
//   - token_bucket: a bucket of capacity Burst (default L), full at first,
//     refilled continuously at L per W. Allowed when it holds at least n tokens.
//   - leaky_bucket: the meter. A bucket of capacity Burst, empty at first,
//     leaking continuously at L per W; allowed when level+n <= Burst. It decides
//     exactly as token_bucket does (tokens = Burst − level); both are kept as
//     the instant the bucket will be full (GCRA's theoretical arrival time)
//     with its fractional part as an exact remainder.
//   - leaky_queue: the shaper. Requests leave one after another, n·W/L apart.
//     With next the instant the queue is free, a request is admitted when its
//     Delay = max(t, next) − t is at most MaxDelay; then next = max(t, next) + n·W/L.
//     The caller holds the request for Delay (rounded up to the nanosecond).
//     A request that will not go ahead (its client left while held) can give
//     its place back ([Refunder]): next moves back by n·W/L when no later
//     request queued behind it.
//
// A request that went ahead but is not to count (a successful login under a
// limit on failed ones) can give back its units under any kind
// ([GiveBacker]): what still counts of them, and never so much that the key
// admits more than it would had the request never come, on a clock that
// does not go back, whatever the order of the give-backs (see
// [GiveBacker.GiveBack] for what a clock behind leaves, and for the note of
// a bucket key's latest give-back that keeps a give-back out of order from
// taking units that came back already).
//
// A store can also tell what a Take would decide without consuming
// ([Peeker], [Limiter.Peek]): for a status endpoint, or a response that is
// not to count. A Peek decides each check alone, changes no key's state
// (not even the instant a key knows of, which a denied Take may move) and
// makes no key.
//
// A key's state under a Spec can be forgotten ([Resetter], [Limiter.Reset]):
// an operator lifting a client's limit, or a login policy's count of
// failures cleared once the user has signed in. The key's next request
// finds it as a key never seen, with its whole allowance; its state under
// other Specs, and other keys, are untouched. Both stores implement it
// (the Redis store deletes the key's Redis keys and forgets it in its deny
// cache); [Limiter.Reset] on a store that does not returns an error
// matching errors.ErrUnsupported.
//
// A check of a window kind (fixed_window, sliding_window, sliding_log,
// sliding_buckets) can be judged at a limit of its own ([Check.Limit]):
// it is decided on the state kept for its Spec and key, which counts every
// request admitted under the Spec whatever the limit its check was judged
// at, exactly as a check of the Spec with that limit in place of its own
// would be decided on that state, and its Decision reports that limit,
// the Remaining below it and the waits until there is room below it. A
// limit lowered from 100 to 50 so leaves a client that used 40 with 10
// more, not a fresh 50, and denies one that used 80 until 31 of them have
// left the window; at 100 again, the client finds everything counted
// meanwhile. A limit raised from 100 to 110 within the window, on the state
// kept under 100, leaves a client that used 100 with 10 more, not a fresh
// 110 (fixed_window, sliding_window and sliding_buckets, up to [MaxLimit]:
// see [Kind.Raisable]; sliding_log's limit can only be lowered); at 100
// again, the client finds the 110 counted, and is denied until the window
// has freed room below 100.
//
// For every kind a Decision reports Remaining (whole units left now; for
// leaky_queue, unit requests it would still queue now), RetryAfter
// (denied: the shortest wait after which the same request would be admitted
// if nothing else arrived), ResetAfter (until the full allowance is back) and
// NextAfter (until Remaining next grows), all to the nanosecond.
//
// A request whose cost is above the capacity could never be admitted: a
// Take of it is an error (a *[CostError]), not a denial. So is a Take whose
// checks on one key under one Spec ask together for more than that key can
// ever admit at once — more than the capacity; for leaky_queue, more than
// the capacity less one before the last of them — since a key's checks are
// decided one after another, each as if the earlier ones had been admitted
// just before it (see [ValidateChecks]). Such a Take consumes nothing, and
// Peek, GiveBack and Refund refuse the same checks with the same error.
// Within that bound, a denied check that follows others on its key waits
// for them all: a denied Take made again, unchanged, after the longest
// RetryAfter of its denied checks is admitted if nothing else arrived, and
// not sooner (see [Decision.RetryAfter]).
//
// # Time that goes back
//
// Time never runs backwards for a key. A request at an instant before the
// latest one the key's state knows of (a clock stepped back, or app hosts
// whose clocks disagree) is decided at that latest instant — the start of the
// key's current window or sub-window, the newest logged request — and its
// durations are lengthened by the difference. The buckets and the queue need
// no such rule: an earlier instant is simply a larger deficit, waited out
// like any other. A sliding_log forgets the requests that have left its
// window, and a sliding_buckets ring moves on, only when it counts a
// request (at its new newest instant): a call that counts nothing (a
// denied Take, a peek, a give-back) at a later instant leaves every
// request counted, and the instant the key decides at, for a call decided
// at an earlier one. So a clock stepped back never resets a key's allowance —
// nor does a key dropped as idle (see [MemoryStore.Sweep]): the
// MemoryStore decides a request on a key it does not hold, at an instant
// before the latest one from which keys it dropped from the key's shard
// were idle, at that later instant, at which a dropped key was back to its
// full allowance (not at the drop's instant: a clock stepped days ahead,
// where a sweep finds every key idle, and back holds no new key to a
// window days ahead). A key evicted at the
// [WithMaxKeys] bound while in use is forgotten, as is a key reset
// ([Resetter]).
//
// # Instants
//
// Instants are Unix nanoseconds ([time.Time.UnixNano], defined from
// 1677-09-21 to 2262-04-11 UTC). The MemoryStore decides a clock reading
// within eight times [MaxWindow] of either end of int64 at that bound,
// where time stands still until the clock comes back: every limit holds
// there, and every duration is within what its Spec allows. Two instants
// more than about 292 years apart (2^63 ns) are further apart than an
// int64 holds: a key decided at both, on a clock gone that far back or
// forward, is not decided exactly.
package algorithms
