// Package redisstore keeps rate-limiting state in Redis, so that several
// application instances share one limit. [Store] implements
// [algorithms.Store] and [algorithms.IntoStore] with the seven algorithms of
// package algorithms and decides exactly as [algorithms.MemoryStore] does:
// every Decision field, to the nanosecond, on the same sequence of calls
// and instants (a randomized differential test and the algotest
// conformance suite check this against a real redis-server).
//
//	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
//	store, err := redisstore.New(client, redisstore.WithPrefix("myapp")) // a dead or paused Redis fails each Take within 2s
//
// Every call of a store has a timeout of its own, [DefaultTimeout] (2 s)
// unless [WithTimeout] sets another (or, with 0, none): the middleware's
// request contexts have no deadline, and with go-redis's default options
// a Take on a paused Redis takes seconds to fail (about 10 with go-redis
// v9.23; see Failures below).
//
// New takes any go-redis v9 client: a *redis.Client (standalone, or the
// Sentinel failover client from redis.NewFailoverClient) or a
// *redis.ClusterClient. A *redis.Ring is refused: it sends a call to the
// shard of its first key, so a client key's state would live on whichever
// shard a Take's first check picked, and limits would not hold.
//
// # One script, one round trip
//
// The algorithms are Lua, embedded in the binary (lua/*.lua) and loaded as
// a Redis function library (Redis 7): the store runs FCALL, and when the
// server does not have the library yet (the first call, after FUNCTION
// FLUSH, a new cluster node) loads it with FUNCTION LOAD (on every master
// of a cluster that serves slots) and calls again (calls that find it
// missing together load it once: one loads it while the others wait for
// that load, and load it in turn if its caller gave up:
// TestRSReview2ConcurrentFirstCallsLoadOnce); a call redirected to a
// node the load did not reach (one a slot is migrating to, which serves no
// slot yet: TestClusterSlotMigratingToANewNode) runs as the script
// instead, and so, for the next 10 s, does every call that finds the
// library missing, without loading it on every master again (a call that
// finds it missing after a load it may have preceded, or, on a
// *redis.Client, which follows no redirection, after any load, FUNCTION
// FLUSH having removed it again, loads it again, up to three times, and
// then runs as the script, as do, for the next 10 s, the calls that find
// it missing: TestFunctionFlushedAgainAfterAnotherLoad,
// TestFunctionFlushedAfterTheCallsOwnLoad, TestFunctionMissingAfterEveryLoad). As a
// library, the helpers' closures are made once, at load, the checks'
// parameters are parsed once per server (lua/spec.lua), not on every call,
// and a key that still holds the state the fast path last wrote there is
// not parsed again (the library keeps the numbers of up to 4096 keys' last
// writes, about 1.2 MB of the server's function memory for keys of 50
// bytes, TestLibraryMemory; a key holding any other value is parsed and
// checked as usual). On a server without functions (Redis 6), or for a user
// not allowed to load or call them (ACL), the store falls back for good to
// the same code as one script, run with EVALSHA and EVAL on NOSCRIPT. The
// server must be Redis 6.0 or later: the code keeps keys' expiries with
// SET KEEPTTL, which older servers refuse (every call would fail).
// The user the client logs in as needs the keys under the prefix (ACL
// ~<prefix>:*) and the commands of @read, @write and @scripting, plus
// TIME, which is in none of them, unless [WithClock] is given: without
// it every Take fails, Redis's error naming no command ("can't run this
// command or subcommand"; TestLeastPrivilegeUser). INFO, which the script
// fallback asks of a denied Take, may be refused. The
// library's name (ratekeeper_<hash>) carries a hash of its code, so stores
// of different versions share a server; a version no longer deployed
// leaves its library behind (about 120 kB of code, 130 kB of function memory), which FUNCTION DELETE
// removes. They share keys too, as far as an older version reads what a
// newer one writes: on a Cluster, a cross-slot Take's reservation of a
// fixed_window, sliding_window, token_bucket, leaky_bucket or leaky_queue
// key writes records after the key's state (see "Keys and expiry"), which
// a version from before those records reads as a value it did not write.
// During a rolling upgrade, such an instance fails every call on such a
// key (Take, Peek, Refund, GiveBack) with an error matching
// [algorithms.ErrKeyState] (an answer of Redis: neither circuit breaker
// counts it; the middleware answers by its failure mode), until the newer
// version writes the key otherwise than by a reservation (an admitted
// Take, a give-back, a refund), or it expires; its own
// cross-slot undos of such a key keep their reservations' units. A key
// that only cross-slot Takes reach keeps its records while they stand:
// finish the upgrade quickly, or give the new version a prefix of its own
// ([WithPrefix]; the two versions then count apart until it is done).
// Every check of a Take goes
// in that one call: one network round trip however many checks there are.
// As a library, a plain Take sends its arguments compact: one
// "kind L W C Buckets MaxDelay cost" string per check, after a header only
// when the Take is not on the server's clock or has a minimum TTL (the
// script, and a cross-slot phase, send seven numbers per check). The script starts with a fast path for the
// common Take (see "Exactness"); the rest of it runs only when that path
// does not apply. Redis runs a script atomically, so a Take
// is all or nothing across application instances: the script first decides
// every check (a repeated key sees the earlier checks' consumption, as if
// they had been admitted, and a denied one waits for them all, as in the
// memory store), then writes only if all are admitted. Checks the store
// refuses never reach Redis: an invalid Spec or cost, and checks of one key
// that ask together for more than it can ever admit at once, are found in
// Go before the call, by the same rule as the memory store's
// ([algorithms.ValidateChecks]), and return its error with no round trip. A denied Take
// consumes nothing, and like the memory store neither prunes a sliding_log
// nor rolls a sliding_buckets ring (package algorithms, "Time that goes
// back"); on a Cluster, neither does one whose reservation was undone,
// unless a request wrote the key between (see "Cluster").
//
// # Checks judged at a limit of their own
//
// A check of a window kind (fixed_window, sliding_window, sliding_log,
// sliding_buckets) whose [algorithms.Check.Limit] is set is judged at that
// limit on the state kept under its Spec: below the Spec's limit, or, for
// fixed_window, sliding_window and sliding_buckets, above it up to
// [algorithms.MaxLimit] (a limit raised within the window). Its keys are
// the Spec's (no key spells the limit judged at, so checks judged at 50,
// at the Spec's 100 and at 110 count in one state), while the script
// decides with the judged limit (the L of its arguments; C stays the
// Spec's capacity, which a window kind never judges with) and the
// Decision reports it as Limit, the Remaining below it (0 when the state
// holds more), and the waits until there is room below it. Nothing in the
// script shapes a state by the limit a check is judged at: a log is
// pruned by time only, and a count past a check's judged limit is read as
// any other, past the Spec's limit too (a check judged above it writes
// such counts, up to the limit it is judged at: 100 of 100 counted, a
// check judged at 110 gets exactly 10 more, then one at the Spec's 100
// finds 110 counted and waits until the window frees room below 100).
// TestJudgedFixedWindow, TestRaisedFixedWindow and their siblings work the
// figures out by hand. A repeated key judges each of its checks at its own
// limit, following the earlier ones as if admitted. Peek, GiveBack and the
// cluster phases judge so too, Reset deletes the Spec's state, and the
// deny cache answers a check only with a denial at the limit it is judged
// at. A Limit the check may not have (on a bucket kind; above Spec.Limit
// on sliding_log; above MaxLimit), and costs past the judged limit, are
// the errors of [algorithms.ValidateChecks], with no round trip.
//
// # Time
//
// By default the script reads the Redis server's clock (TIME, microsecond
// resolution, used as nanoseconds = µs·1000), so application instances with
// skewed clocks still agree. [WithClock] passes the injected clock's
// instant instead, to the nanosecond (tests, replays); then the instances
// must agree on the time. Decisions are computed in nanoseconds throughout.
//
// # Exactness
//
// Lua numbers are doubles, exact for integers below 2^53, while instants are
// about 1.8·10^18 ns and products like Limit·Window reach 8.64·10^22. The
// script never rounds. The proof, for the bounds [algorithms.Spec.Validate]
// enforces (Limit, Burst and queue capacity at most 10^9 < 2^30; Window and
// MaxDelay at most 24 h = 8.64·10^13 ns < 2^47; Buckets at most 3600):
//
//   - The instant t is passed as seconds and nanoseconds, TS·10^9 + TN,
//     both exact. Stored instants are kept the same way ("s n"), and only
//     their difference from t is used as a plain number: (s−TS)·10^9 +
//     (n−TN), exact because a state whose whole second s is more than
//     2·10^6 (23 days) from TS is treated as expired first, so the
//     difference is below 2·10^15 + 10^9 < 2^51.
//   - A window index floor(t/W) is below 2^63/10^6 < 2^44 (W >= 1 ms) and is
//     stored as is. A sub-window index can reach 2^55 (a sub-window can be
//     278 ns), so it is stored as the pair (window index, bucket < 3600).
//   - A window kind's stored count (a fixed_window or sliding_window
//     window's, a sliding_buckets sub-window's or ring's) is at most
//     MaxLimit = 10^9 < 2^30, whatever its Spec's limit: a check admits
//     only while the count stays within the limit it is judged at, which
//     is at most MaxLimit, its Spec's or one above it; a count past
//     MaxLimit is not the store's (see "Failures"). Within one Take a
//     repeated key's count may add the costs of the earlier checks on it,
//     which together are at most the last one's judged limit
//     ([algorithms.ValidateChecks]): below 2·10^9 < 2^31. So counts are
//     below 2^31, their products with a duration (up to 8.64·10^13 <
//     2^47) below 2^78, and every duration a Decision reports is below
//     2^52: at most a few windows, or the deficit of a bucket (below 2^51),
//     plus, for a window kind deciding at a state's later instant (see
//     "Clocks that go back"), that instant's lead of at most 2^51.
//   - A product that can reach 2^52 — D·L (D a deficit below 2^51, so
//     below 2^81), (C−m)·W, prev·(W−e), MaxDelay·L (below 2^77) — is a "wide"
//     value: a plain number while it is below 2^52 (a product of integers
//     whose rounded value is below 2^52 is exact, since rounding is monotone
//     and 2^52 is representable), otherwise base-2^24 limbs, whose limb
//     products are below 2^48 and column sums below 2^50.
//   - Wide values are only added, subtracted, compared and divided by a
//     number below 2^48 (W, L, a count) where the quotient is known to be
//     below 2^52: ceil(D·L/W) is taken only after comparing D·L with C·W
//     (so it is at most C), ceil(D·L/L) is at most D, a sliding window's
//     floor(a·W/prev) only after comparing a·W with (W−e)·prev (so it is
//     below W), n·W/L at most 48 h (Validate bounds Burst·W/L and the queue),
//     and a bucket give-back's whole units ceil(X/W) only when X <= C·W.
//     The division takes q0 = floor(fl(X)/d), within a few units of the
//     quotient, and corrects it with the exact remainder X − q0·d, summed
//     limb by limb from the top, where every partial sum is exact.
//
// TestLuaArithmetic checks these operations against math/big on the server.
//
// The fast path (lua/fast.lua, its decisions in lua/fastlib.lua) decides a
// plain Take — not a cluster phase, no key twice, at most 4096 checks, every
// check fixed_window, sliding_window, token_bucket, leaky_bucket or
// leaky_queue — with one GET,
// or one MGET and a GET for each key it finds missing (MGET reads a key of
// another type as missing; GET fails on it), one SET per key
// (TestFastPathCommands), and, as a library, no closure or table made per
// call but the replies Redis itself builds (and, for a key it has not
// written yet, the entry that keeps its last write: see above; past 16
// checks, a table that finds a key named twice in time linear in the
// checks); any other Take (sliding_log, sliding_buckets, a repeated key,
// more checks: Lua's unpack, which passes MGET its keys, takes fewer than
// 8000, TestReview3ManyChecksMatchMemoryStore) goes to the general
// script, at the same instant. It is the general path's arithmetic, with
// plain numbers exactly where the general path has them:
//
//   - The instant: as above. A bucket's F − t = (s−TS)·10^9 + (n−TN) only
//     when |s−TS| <= 2·10^6, so |F − t| < 2·10^15 + 10^9 < 2^51.
//   - The window of t: when 10^9 divides W, k = floor(TS/(W/10^9)) and
//     e = (TS − k·W/10^9)·10^9 + TN < W; when W divides 10^9, k =
//     TS·(10^9/W) + floor(TN/W) with |TS| < 2^34 and 10^9/W <= 1000, so
//     |k| < 2^44. Any other W takes the wide-value window above.
//   - fixed_window: counts below 2^31 and durations below W: no products.
//   - sliding_window: ceil(prev·(W−e)/W) is taken on plain numbers exactly
//     when the computed product prev·(W−e) is below 2^52 (then it is exact,
//     as above); so is each product of the waits (slidingWait): a·W and
//     (L−m)·W, each a count times a duration, plain exactly when its
//     computed value is below 2^52, and otherwise wide. (W−e)·prev is only
//     compared with a·W: when a·W is plain and (W−e)·prev reaches 2^52,
//     which it can for a check judged at a limit l ([algorithms.Check.Limit])
//     whose prev, counted at a higher limit, passes l, the rounded
//     product is no less than 2^52 (rounding is monotone), so the
//     comparison is exact all the same (TestJudgedBigCounts). Otherwise the
//     same steps run on wide values (TestSlidingWindowProductsPast2To52
//     decides where rounding to a double would move a ceiling).
//   - token_bucket, leaky_bucket: plain only when C·W < 2^52 and D·L < 2^52
//     (D·L computed as (F−t)·L + x: when the rounded (F−t)·L is below 2^52
//     it is exact, and adding x < 2^30 stays exact). Then (C−n)·W, n·W and
//     (C−m)·W for m >= 1 are at most C·W; an admitted check leaves D'·L =
//     max(D, 0)·L + n·W <= (C−n)·W + n·W = C·W < 2^52 (admitted means D·L
//     <= (C−n)·W); every quotient is of a plain number by W or L. When C·W
//     or D·L reaches 2^52 the same steps run on wide values.
//   - leaky_queue: the general path's steps (leakyQueue, queueWait,
//     queueAvail) on the wide-value helpers, which keep a value a plain
//     number exactly while it is below 2^52: the same arithmetic.
//
// The differential test reaches every branch of the fast path (each one,
// broken on purpose, makes it fail) and the general path's.
//
// Clocks that go back: as in the memory store, a request at an instant
// before the key's latest one is decided at that latest instant and its
// durations lengthened. A state too far ahead of the instant — only an
// injected clock stepped back that far can make one — is treated as
// expired instead, where the memory store would keep it: for the window
// kinds one whose latest instant (its window's start, or its newest
// sub-window's) is more than 2^51 ns (26 days) ahead, for the bucket kinds
// and sliding_log one whose stored instant's whole second is more than
// 2·10^6 (23 days) from the instant's (the bound of the exact instant
// arithmetic above); TestStateAheadExactThresholds pins both to the
// nanosecond.
//
// # Keys and expiry
//
// A check's state lives at <prefix>:{<key>}:<spec> ([WithPrefix], default
// "rk"), or, for a key "ns:rest" with a namespace before its first ':' (the
// policy layer writes every key as "<policy name>:<client key>"), at
// <prefix>:{<rest>}:<ns>:<spec>. Both parts are escaped (bytes outside
// 0x21–0x7E, '%', '{' and '}' become %XX; the empty string is "%"), which
// is injective and keeps braces out of them, so the braces are exactly the
// Redis Cluster hash tag, and it holds only the client key: the keys of
// every policy and spec of one client share a slot, and a Take of stacked
// policies on one client key (10 per second and 100 per minute per IP) is
// one script call on a Cluster too. The namespace follows the tag so that
// the prefix is always what precedes ":{": stores whose prefixes are "P"
// and "P:a" never share a key. <spec> spells every field of the
// Spec, so two specs never share state. sliding_log adds a list at the same
// key plus ":l". On a Cluster, a cross-slot Take's reservation of a
// sliding_log or sliding_buckets key also writes the key plus ":u", its
// side key (see "Cluster"), with the expiry the reservation gives the key
// (an undo keeps it); and a reservation, of any kind (a denied one too,
// where the server accepts the write), writes its reply at its marker, the first key of its slot plus ":r" and
// its id (16 hex digits), which expires once go-redis can no longer send
// the reservation again, at most a minute later (see "Failures"), however
// long the keys' state matters. A give-back of a token_bucket or
// leaky_bucket key that gives units back, and a cross-slot undo of such a
// key's reservation that others were counted on top of, write the key plus
// ":g", the note of the key's latest give-back ("gs gns hs hns hx gq gr",
// see lua/notes.lua), expiring ceil(C·W/L) after the give-back's instant
// (rounded up to the millisecond plus 1 ms, at least [WithMinTTL]'s), when
// it no longer changes an outcome; a note Redis evicts under maxmemory
// before then lets a later give-back of an older Take take units that came
// back already, as before notes were kept. Keys are never built from patterns, and nothing is ever
// looked up by pattern (no KEYS or SCAN: TestNoPatternLookups).
//
// Every write of an admitted Take or of a refund sets an expiry (PX) for
// when the state stops mattering: the Decision's ResetAfter rounded up to
// the millisecond, plus 1 ms, since Redis counts it from its clock's current
// millisecond, which may begin up to 1 ms before the instant decided at
// (TestExpiryIsResetAfterRoundedUpPlusOne); so the key expires no earlier
// than ResetAfter after that instant (TestKeyOutlivesItsState) — on the
// server's clock, the one that decides. One exception, on the server's clock
// without [WithMinTTL]: on the fast path, a fixed_window key rewritten in
// the window it already holds, or a sliding_window key that already counts
// something in it, keeps its expiry (SET KEEPTTL, cheaper than PX), because
// every admitted write in window k ends at the same instant (the end of
// window k, or of window k+1 for sliding_window), which the expiry the
// first one set already outlives (TestExpiryCoversResetAfter). The other writes (a
// give-back, a cross-slot undo) keep the
// key's expiry too: none moves the instant the state stops mattering later
// (TestEveryKeyExpires, TestSlidingKeyOutlivesItsResetAfterAfterGiveBack).
// With an injected clock, which Redis does not follow, keys live at least
// [DefaultClockTTL] (see [WithMinTTL]); a key kept longer never changes a
// decision.
//
// Per key the state is a short string: "k count" (fixed_window), "k prev
// curr" (sliding_window), "s n rem" — the instant the bucket is full or the
// queue free, with its remainder in 1/Limit ns — (token_bucket,
// leaky_bucket, leaky_queue; on a Cluster, a cross-slot Take's reservation
// of such a key follows the state with "|" and records of the
// reservations not known to be over, at most 16, which its undo reads and
// any other write drops: see "Cluster"), "w b sum slot count ..." (sliding_buckets,
// non-empty buckets only), and for sliding_log the total plus a list of
// "s n cost" events, read lazily (a decision reads the newest event, the
// ones leaving the window — the first one left is searched for, and only
// the costs of those before it are read; none when the newest has left
// too: the list is dropped whole — and for a wait only as many as it
// needs, their costs read in chunks, a denied Take's two waits in one
// walk, and none but the one found when every event is of one unit, the
// total being the list's length: TestSlidingLogReadsLazily,
// TestSlidingLogPruneWorkIsBounded, TestSlidingLogWaitWorkIsBounded). A
// log may hold up to Limit events, and a script blocks Redis while it
// runs: a Take that prunes many events at once still reads each one's
// cost (half of 10^6 held Redis about 0.5 s on this project's test
// machine), as does a wait that needs many events to leave when they are
// not all of one unit (a denied cost near Limit on a log of 10^6 events
// of costs 1 to 3, about 0.6 s).
//
// A sliding_log's two keys both carry an expiry, so Redis under maxmemory
// with a volatile-* or allkeys-* policy may evict one without the other.
// The total is always written as the sum of the list's costs, so the list
// alone holds the whole state: a list whose total is gone has it rebuilt
// exactly (the sum of its items; those out of the window then leave it as
// usual), and written back with the list's expiry, and the decisions are
// those of the memory store, which lost nothing
// (TestSlidingLogTotalEvicted). The rebuilding reads the whole list, once,
// and only then; a Take that finds the total reads no more than before. A
// total whose list is gone lost the events it counted: the log starts
// empty, as any evicted key's state does (TestSlidingLogListEvicted).
//
// The state is only as durable as the server keeps it. A key Redis loses
// (evicted under maxmemory, a FLUSHALL, a restart of a server without
// persistence, a failover to a replica the last writes had not reached)
// starts again as a key never seen: its client is admitted the whole
// limit anew, never refused for state that is gone. A server with
// persistence (RDB, AOF) keeps the state its last save or fsync held;
// one that limits matter across restarts needs it, or a replica to fail
// over to.
//
// # Cluster
//
// With a *redis.ClusterClient, a Take whose keys share a slot (one client
// key, under any number of policies and specs) is one script call as above. Checks on several
// slots cannot run in one script, so such a Take runs in phases, each a
// script call per slot, in parallel (on any *redis.ClusterClient: one
// from redis.NewFailoverClusterClient too, whose one master holds every
// slot, TestFailoverClusterClientSplitsBySlot; redis.NewFailoverClient
// makes every Take one script call there):
//
//  1. Peek: each slot decides its checks without consuming. If any check is
//     denied, that is the answer, and nothing was consumed anywhere.
//
//  2. Reserve: each slot decides again and consumes, all or nothing within
//     the slot. If every slot admits, that is the answer. A reservation
//     that consumes also writes its reply at its marker (see "Keys and
//     expiry"), and a call of it that finds the marker answers that reply
//     and runs nothing: go-redis sends a call again when its reply is lost
//     after it ran, and the reservation consumes once (see "Failures";
//     but while its slot migrates, see there).
//
//  3. Undo: if a slot now denies (another request took the last units
//     between the phases), the slots that admitted are undone, and decide
//     their checks again without consuming. Undone, a reservation is a
//     denied Take: the key as if it had not been made, the requests
//     counted in it since as they were counted.
//
//     A reservation of a fixed_window, sliding_window, token_bucket,
//     leaky_bucket or leaky_queue key writes, after the key's state, a
//     record of itself and the value the key held (see "Keys and
//     expiry"), which every other write (a Take, a give-back, a refund)
//     drops: a record says that no request was counted in the key since,
//     however the state reads (a Take and its give-back may leave the very
//     string the reservation wrote:
//     TestClusterUndoWindowTakenAndGivenBackBetween,
//     TestClusterUndoBucketTakenAndGivenBackBetween). The undo of the
//     newest record gives the key its old value back, in the window it
//     was in, as a denied Take leaves it, with its old expiry
//     (TestClusterUndoLeavesWindowAsBefore,
//     TestClusterUndoRestoresTheOldExpiry); the undo of one below newer
//     ones counts theirs again, each at its own instant (a window kind's
//     in the window it was decided in, whose count admitted it:
//     TestClusterUndoRecountsInTheDecidedWindow), on the value it
//     found, so that overlapping reservations undone in any order leave
//     the key as before (TestClusterUndoWindowOverlapping,
//     TestClusterUndoBucketOverlapping). A leaky_queue keeps the place
//     when a request queued behind it, a plain one or a reservation: it
//     was told to wait for it, and moving the queue back would send the
//     next request with it, two at once (as Refund, it keeps such a place:
//     TestClusterUndoKeepsAQueuePlaceWithRequestsBehind,
//     TestClusterUndoKeepsAQueuePlaceWithAReservationBehind); a place kept
//     for a reservation goes once that one is undone too
//     (TestClusterUndoQueuePlaceBehindAReservation). A reservation whose
//     record is gone (a request was counted since, or past 16 records the
//     oldest was dropped) is subtracted where that is exact: a window
//     kind's counts are additive, and its units come off the window that
//     still counts them, if any, the one it was decided in, where an undo
//     below it counts it again too
//     (TestClusterUndoWindowCountedAgainElsewhere); a bucket kind moves its instant to
//     max(F, t) + n·W/L, which is not additive, and n·W/L comes off when
//     that is provably exact for requests at the undo's instant or later
//     (the key holds the state the reservation wrote, every request since
//     given back; or, but for a leaky_queue, the bucket was not full
//     before the reservation at the undo's instant, so no request in
//     between found it full), less, for token_bucket and leaky_bucket, the
//     time from the reservation to the undo: the record tells the key as
//     the reservation saw it, and the undo of an overlapping reservation
//     below it since may have taken units from under it, after which a
//     request in between may have found the bucket full without either,
//     at an instant no later than the undo's
//     (TestClusterUndoBucketRecountedBelow); failing that, the
//     reservation's units stay consumed. The subtraction leaves the bucket's instant at max(F, t),
//     not F: a request at an instant before t (a clock behind) then finds
//     less room than the Model would (it errs towards denying;
//     TestClusterConcurrentCrossSlotTakes checks no more Remaining than
//     the Model for the bucket kinds). Left (lua/cluster.lua): a request
//     counted since at an earlier window than the reservation's (a clock
//     behind) is counted in the window the reservation moved the key to,
//     where its undo leaves the key; so is a sliding_window key the
//     reservation moved on a window when a give-back since took units of
//     a request counted before it.
//
//     Undone, a sliding_log or sliding_buckets reservation is a denied
//     Take too, which forgets no sliding_log event and rolls no
//     sliding_buckets ring: a request decided at an earlier instant (a
//     clock behind) still counts what left the reservation's window. So
//     the reservation returns what its write forgot, and when no request
//     was counted in the key since (a give-back or another undo may have
//     written it: they forget nothing), the undo puts that back: the
//     events it trimmed off the log (in front of the list, their units in
//     the total), the ring's slots as they were. Otherwise (a request was
//     counted in between, and forgot as much if it stands) the undo
//     subtracts the units only (TestClusterUndoLeavesLogAndRingAsBefore,
//     TestClusterGiveBackBetweenReservationAndUndo). Cross-slot Takes of
//     one key whose reservations overlap are followed in the key's side
//     key (the key plus ":u", in its slot), where each reservation of a
//     sliding_log or sliding_buckets key registers: an undo that finds a
//     newer reservation, not yet undone, counted since hands what its write
//     forgot to it, and the newest reservation's undo, when no request was
//     counted since, puts back its own and what was handed over, in
//     whatever order the undos come (TestClusterOverlappingReservations,
//     TestClusterOverlappingUndosLeaveLogAndRingAsBefore). A reservation
//     that stands has forgotten them, as an admitted Take has, what was
//     handed over to it included (TestClusterStandingReservationForgets).
//     Left (lua/cluster.lua): past 32 reservations of one key not known to
//     be over (those that stood stay listed until a request is counted or
//     the key expires), the oldest is dropped from the side key, and what
//     it forgot may stay forgotten. The events a log trims go back and
//     forth in the reservation's reply and the undo's call: as many as the
//     reservation had to read to prune them.
//
//     The undo runs on a context of its own (for the store's timeout,
//     [DefaultTimeout] unless [WithTimeout] sets another; a second under
//     WithTimeout(0)), so a caller's context that ends
//     between the phases does not leave a reservation in place. A
//     reservation that got no reply (the caller's context ended while it
//     was at Redis, which runs it all the same; a reply lost), or a reply
//     the store cannot read (Redis's nil, one of the wrong shape: Redis
//     ran it), is sent again on that context under its id: its marker
//     answers the run's reply without running it again (or, not run yet,
//     it runs then, once), and it is undone like the others
//     (TestClusterAbandonedReservationUndone,
//     TestClusterUnreadReservationUndone); one the store never sent (its
//     circuit open, the store closed) is not. A denied reservation
//     writes its marker too, so that the call still on its way behind a
//     resend that was denied finds it and runs nothing, even once the key
//     has room again (TestClusterDeniedResendStopsTheAbandonedReservation). An undo
//     that gets no reply in that time is an error of the Take, which
//     names the slot whose reservation may have been left in place (was,
//     when Redis refused the undo), with the failed reservation's error
//     if one failed: errors.Is matches both, and the error is classified
//     as the reservation's (ErrKeyState, the store's own deadline:
//     TestClusterUndoFailedTooNamesTheReservationLeft,
//     TestClusterUndoFailedTooOwnDeadline; the circuit breaker, one per
//     node, counts each node's parts on it:
//     TestClusterUndoFailedTooCountsInTheBreaker); its
//     reservation may stay consumed, as does one that fails otherwise
//     (its slot moved to another node meanwhile, on a client that follows
//     no MOVED, MaxRedirects -1: TestClusterSplitTakeMovedNoRedirects; a
//     client that follows them, as by default, sends the undo to the
//     slot's new node: TestClusterSplitTakeFollowsMovedSlot).
//
//     Left: an undo that finds its key rewritten since the reservation
//     (its record, or the state it wrote, gone) cannot tell a request
//     counted since from the key deleted and counted anew: after a Reset
//     of the key between the phases, or a failover that lost the
//     reservation's write, it takes the reservation's units from what was
//     counted since, which admits up to that many more (a fixed_window of
//     10 admitted 12 in a window, reserved 4, Reset, then took 6 and 6).
//
// So an admitted cross-slot Take costs two parallel round trips, one that
// phase 1 denies one (TestClusterCrossSlotRoundTrips), and one whose
// reservation a slot denies (another request took the room between the
// phases) three when other slots admitted theirs: the peeks, the
// reservations and the undos. Between
// phases 2 and 3 a reservation is visible: another request may be denied
// by units that are then given back, and a bucket key that cannot be
// undone exactly keeps them (it waits them out): the
// inconsistency always errs towards denying, never towards admitting more
// than a limit, on the server's clock (the default). Each node reads its
// own clock for its slots; with an injected clock, the instances must
// share it, and a bucket key's undo takes the clock's reading when the
// undo is made (the script cannot read it), just before it is sent: a
// request of another instance that reads the shared clock after that
// reading, finds the bucket full again, and reaches Redis before the undo
// can have the undo give back units the bucket had already regained
// (admitting up to the reservation's units more than the limit). On a
// clock that moves with real time that window is the undo's trip to
// Redis; a clock that jumps within it, as a replay's may, widens it.
// The algotest suite passes unchanged on a three-node cluster
// (TestConformanceCluster), concurrency tests included.
//
// # Refunds
//
// The store is an [algorithms.Refunder]: [Store.Refund] gives back the
// queue places of an admitted Take's leaky_queue checks whose request will
// not go ahead (lua/refund.lua mirrors the memory store's rule exactly,
// on the wide values where products pass 2^52), in one script call, which
// then looks at each queue as it stands (the [algorithms.Refunded] each
// check reports, computed as the memory store does); on a Cluster, when
// the keys span slots, one call per key (a refund has no all-or-nothing to
// keep: every key is refunded, and the first error returned; a key of a
// node whose circuit is open ([WithCircuitBreaker]) fails with
// ErrCircuitOpen, unsent). The place is recognised as its queue's last from the caller's
// remaining wait, measured on the caller's clock while the store reads
// Redis's: a round trip of uncertainty, so the rule is exact for queues
// whose spacing W/L is longer than twice a round trip (see
// algorithms.Refunder). A refund, failed or not, drops this process's deny
// cache entries for the keys it touched; other processes' caches keep
// their denials until their RetryAfter (see [WithDenyCache]).
//
// The store is also an [algorithms.GiveBacker]: [Store.GiveBack] gives
// back the units of an admitted Take of any kind (lua/giveback.lua mirrors
// the memory store's steps, and reports as a peek), in one script call
// (one per key on a Cluster whose keys span slots), dropping the deny
// cache's entries for its keys as a refund does. The Take's window, bucket
// or log instant is told from the caller's reckoning by the nearest
// boundary or instant, so a round trip of uncertainty matters only to the
// buckets (a round trip's refill) and to a log with requests less than two
// round trips apart (see algorithms.GiveBacker). A bucket Take gives back
// what its decision reckons its deficit, less its refill since, lowered by
// the key's note of its latest give-back that gave units back, or undo of
// a cross-slot reservation that others were counted on top of
// (lua/notes.lua, algorithms' bucketNote): the key plus ":g", holding the
// note's instant G, the instant the bucket was full right after it and
// the units given back at G, written by the give-back and undo scripts
// and living ceil(C·W/L) past G (at least the minimum expiry); Reset
// deletes it. A Take decided before G gives back only what its own units
// have not refilled, so a give-back out of order, or after the undo of an
// older reservation, never takes units that came back already
// (TestGiveBackOutOfOrderNeverOverAdmits,
// TestClusterUndoOfAnOlderReservationThenGiveBack).
//
// # Peeks
//
// The store is an [algorithms.Peeker]: [Store.Peek] decides each check
// alone without consuming, in one script call (one per slot on a Cluster
// whose keys span slots, in parallel), on the server's clock or the
// injected one, by the Take's own Lua (mode 6 of lua/main.lua, which the
// general path dispatches to; a plain Take's fast path does not look at
// it). It writes nothing: not a sliding_log total a Take would rebuild, no expiry; a user
// without write permission (ACL -@write) can peek (TestPeekWritesNothing),
// and so can one that may read the store's keys but not write them (ACL
// %R~), to whom Redis refuses FCALL and EVALSHA, which declare their keys
// read-write: a Peek they were refused is sent again read-only (FCALL_RO,
// EVALSHA_RO), and so is every later Peek of the store
// (TestPeekAsReadOnlyKeysUser; a cluster client with ReadOnly sends those
// to replicas), and so can a client of a server refusing writes, one at its maxmemory
// (OOM) or a read-only replica: as a library, a Peek calls the same code
// registered as a function flagged no-writes, which such a server runs
// where it refuses the Take's function whole (TestPeekNeedsNoWrites); one
// that lost the library (a restart, FUNCTION FLUSH) refuses to load it
// again, and the Peek runs as the script instead, each time until the
// library is back (TestPeekNeedsNoWritesWithoutTheLibrary), as does a
// Take, whose writes it refuses as they come: it fails, and on a
// replica fails denied too (the script asks INFO then; a replica's state
// lags its master's: TestSentinelDemotedMaster), while a master at its
// maxmemory answers a denial.
// The library is not sent again on every call there: after a refused
// load, the next 64 calls that find it missing run as the script at once,
// and the one after tries to load it again (TestLoadRefusedNotResent).
// It goes through the circuit breaker and WithTimeout as a Take does. The
// deny cache neither answers nor learns from a Peek: a status shown to a
// client comes from Redis, which another process may have reset.
//
// # Resets
//
// The store is an [algorithms.Resetter]: [Store.Reset] deletes the
// Redis keys of each check's key under its Spec (sliding_log's two), in
// one DEL, or on a Cluster whose keys span slots one DEL per slot sent in
// one pipeline, through the circuit breaker and within the timeout as a
// Take. The deleted keys leave nothing behind that a later Take reads (the
// fast path's memo of a key's last value is used only while the key holds
// that very value). A reset, failed or not, drops this process's deny
// cache entries for its checks once the DEL is done, so this process
// admits the key at once; other processes' caches keep their denials
// until their RetryAfter (see [WithDenyCache]). A cross-slot Take whose
// reservation a Reset deletes before its undo takes its units back from
// the requests counted after the Reset (see "Cluster").
//
// # Failures
//
// Errors are returned, never panics; a reply of the wrong shape is an error.
// So is a key under the prefix that the store did not write (one of another
// type, or a string it cannot read as its state, which a cross-slot
// reservation's records may follow, "|" and a letter or digit first: the
// application's own key under a colliding prefix): the Take fails before it writes anything but a
// lost sliding_log total of an earlier check, which it rebuilds from the
// list as any call would, changing no decision
// (TestForeignKeyAfterALostTotal), and the key is left as it is
// (TestForeignValueIsAnError). A sliding_log list without its total is the
// store's only if every item is an event as the store writes it ("s n cost":
// integers of at most 15 digits written without leading zeros, 0 <= n <
// 10^9, cost >= 1, in non-decreasing order of instant, their costs summing
// below 2^52); any other list there is the application's, and fails the Take
// so (TestForeignLogListIsAnError, TestSlidingLogListNotTheStores). Nor is a
// value of the store's shape with numbers it never writes: a negative count,
// a fixed_window or sliding_window count past [algorithms.MaxLimit] (one
// past its Spec's limit, up to MaxLimit, is the store's, counted by checks
// judged above that limit, and a sliding_log or sliding_buckets total past
// the Spec's limit is read as a state: TestCountPastSpecLimit), a bucket instant's nanoseconds of
// 10^9 or more or remainder of Limit or more, a sliding_log event of such
// nanoseconds or of a cost below 1 or from 2^52, or one its total does not
// cover when it leaves the window (a list whose newest event has left is
// dropped whole, read no further than that event: its total must cover
// that event and a unit for each other); a sliding_buckets ring whose newest
// sub-window or a listed slot is outside the ring, a slot listed twice or
// with a count below 1, or counts that do not sum to its total; a
// sliding_log total not written as the store writes a non-negative integer,
// or less than the number of events in its list. Read as a state, a negative
// count admitted past the limit, a ring whose total no slot held made the
// script loop for good (Redis answering BUSY to every client), and numbers
// past 2^53 made replies no Decision can hold
// (TestCorruptBucketsStateIsAnError, TestCorruptLogTotalIsAnError,
// TestCorruptNumbersAreErrors). Its error matches [algorithms.ErrKeyState]
// (errors.Is), as well as the redis.Error Redis replied: Redis answered, the
// key is at fault, and neither the store's circuit breaker nor the
// middleware's counts it as a failure of Redis.
// A Take honours its context: with a client whose ContextTimeoutEnabled is
// set, go-redis bounds the I/O by its deadline (not by a cancellation: a
// cancelled call ends at its reply, and returns it, or at its deadline,
// the store's timeout, and returns context.Canceled; without a deadline,
// under WithTimeout(0), at the client's ReadTimeout:
// TestCancelledCallEndsAtItsReply,
// TestRSReview2CancelledCallEndsAtTheStoresDeadline); otherwise the call runs
// in a goroutine that the Take stops waiting for when the context ends (the
// goroutine ends when the client's own timeouts end the command;
// [Store.Close] waits for it). On such a client every call runs so unless
// WithTimeout(0) leaves it without a deadline: a goroutine per call, which
// ContextTimeoutEnabled saves; a panic in it (a client's hook) is raised
// on the caller's goroutine while the caller waits (TestBreakerProbePanics,
// TestRSReview2ResetHookPanicReachesCaller), and in the goroutine once it
// has stopped waiting. So is one in the per-slot calls of a cross-slot
// Take or Peek on a Cluster, which run on goroutines of the store's own
// with any client, once the Take has undone the other slots'
// reservations (TestRSReview2SplitTakeHookPanicReachesCaller). The caller's context
// error is returned as is, and only then: a context error of the store's
// own (its timeout: [DefaultTimeout], or [WithTimeout]'s) is wrapped. An error does not prove that nothing was consumed:
// the script may have run before the reply was lost, or run and answered
// a reply the store cannot read (Redis's nil, one of the wrong shape, as
// a proxy or a client's hook may hand it on). A Take whose keys share a
// slot is one script call, which consumed all of its checks or none: it
// stands so, and its error, not one about a key, counts in the circuit
// breaker and is answered by the caller's failure mode
// (TestReviewFailedTakeMayHaveConsumed,
// TestUnreadSingleSlotTakeStandsWhole). It is not sent again and undone as
// a cross-slot reservation is (see "Cluster"): that needs a marker of its
// reply, a key per Take for as long as go-redis may send it again (see
// below), on every Take, for a failure whose cost errs towards denying (a
// request the middleware fails open on went ahead, and is counted). A
// cross-slot Take that fails has each reservation that may have run
// undone (see "Cluster"), all but one whose resend or undo failed, which
// its error names. go-redis sends a command again when its connection
// fails after sending it (io.EOF, a read timeout), up to its MaxRetries:
// the calls that give units back ([Store.Refund], [Store.GiveBack], a
// cross-slot undo) are sent at most once, since each run would give them
// back again and admit more than the limit; a Take may be sent again so,
// and then consumes twice, erring towards denying
// (TestGiveBackReplyLostIsNotRepeated, TestTakeReplyLostIsSentAgain). A
// cross-slot Take's reservation on a Cluster is sent again so too, but
// runs once: the call sent again finds
// the reply the run wrote at its marker (see "Cluster") and answers it, so
// an admitted Take consumes once and decides as the run did, and the undo
// of a denied one gives back the one run, the Take consuming nothing; for
// every kind, sliding_log and sliding_buckets included, and with a
// request counted in the key between the run and the call sent again
// (which drops the records the undo reads, not the marker:
// TestClusterReservationReplyLostIsSentAgain,
// TestClusterReservationReplyLostServerClock). The marker lives as long
// as go-redis may still send the call again, and no longer. go-redis sends
// a call again only from its retry loops, which stop at the call's
// context's deadline before each attempt; so the marker lives the shorter
// of two bounds, plus a margin of a second (for the bytes of a write still
// on their way, a context's timer firing late, a call queued at the
// server), and at most a minute (TestClusterMarkerLivesAsLongAsItsCall):
//
//   - with a deadline (the request's, or the store's timeout: see
//     [WithTimeout]), the time left to
//     it, plus what the client may still send after it: nothing with
//     ContextTimeoutEnabled (a write after the deadline fails unsent),
//     else a new connection's handshake under way (four round trips) and
//     the call's write, within the client's timeouts;
//   - the client's options: (MaxRedirects+1) × (MaxRetries+1) attempts,
//     each within its pool wait (PoolTimeout), dials (DialerRetries ×
//     DialTimeout, DialerRetryTimeout between), handshake, write and read
//     (WriteTimeout, ReadTimeout; or the relaxed timeout of maintenance
//     notifications, 10 s by default, when longer and not disabled by
//     MaintNotificationsConfig), and a backoff (MaxRetryBackoff) after
//     each.
//
// Options that leave a phase unbounded (no ReadTimeout or WriteTimeout, an
// OnConnect or a credentials provider in the handshake, a
// DialerRetryBackoff function, MaxConcurrentDials below PoolSize) leave
// the minute when no deadline bounds the call; go-redis's default options
// allow a call minutes (dials and handshakes hanging one after another),
// and leave it too. A call sent again after its marker expired runs again
// and consumes twice, erring towards denying; so does one whose marker
// Redis evicted (under maxmemory, a volatile-* policy takes the keys
// nearest their expiry, markers among the first, and an allkeys-* policy
// may take one too): admitted or denied, the Take leaves the run sent
// again consumed (TestClusterReservationMarkerEvicted); so does one sent
// without its marker while its slot migrates (see below). The markers cost
// memory: a key per slot of each reservation that consumed, holding its
// reply (a few hundred bytes; for a sliding_log, the events it trimmed
// too), for that lifetime: at 5,000 cross-slot Takes a second on two
// slots, about 600,000 keys (some 150 MB) for the minute (WithTimeout(0)
// and requests without deadline), about 30,000 (some 7.5 MB) under the
// [DefaultTimeout] of 2 s with ContextTimeoutEnabled (3 s), and about
// 12,500 (some 3 MB) under a [WithTimeout] of 250 ms (1.25 s).
//
// The middleware passes each request's context, which usually has no
// deadline, and go-redis with its default options takes seconds to give up
// on a dead Redis (it redials and retries: 1.7 s with connections refused)
// and longer on a paused one (about 10 s). So that such a Redis fails each
// request promptly, every call of the store is bounded by its timeout,
// [DefaultTimeout] (2 s) unless [WithTimeout] sets another (its error
// wraps context.DeadlineExceeded, and, when the client's latest dial
// failed, that dial's error too: a refused connection is Redis down, not
// slow; TestTimeoutNamesRefusedConnection, TestDefaultTimeoutPausedRedis).
// For a shorter bound, set a shorter WithTimeout and give the
// client short DialTimeout, ReadTimeout and WriteTimeout and
// ContextTimeoutEnabled (then no goroutine outlives an abandoned call,
// and a cross-slot reservation's marker lives little longer than the
// call: see above); examples/redis does both.
//
// Failovers: a store on a Sentinel failover client fails each Take
// (within its timeout) while the master is lost, and decides on the
// promoted replica as soon as the client reaches it, with what
// replication carried there, the library included (TestSentinelFailover).
// On a Cluster, a call that gets no reply has the client reload its slot
// map, so that a replica that took over a lost master's slots is reached
// at once (TestClusterFailover); so does a call split by slot or by key
// (a cross-slot Take, Peek or Reset, a give-back or refund) any of whose
// parts gets none, whichever part's error it returns: another part's may
// be a reply, such as a key's value the store did not write
// (TestClusterSplitFailureWithoutReplyReloadsSlots). A call its caller
// ended (cancelled, or past the caller's deadline; not the store's own
// timeout, nor a cross-slot undo's) reloads nothing
// (TestClusterCallerEndReloadsNoSlots). A slot moved to
// another node (a reshard) is answered MOVED by its old node, which
// go-redis follows, in every phase of a cross-slot Take, and reloads its
// map on (TestClusterSplitTakeFollowsMovedSlot). While a slot migrates
// (from CLUSTER SETSLOT MIGRATING until SETSLOT NODE), Redis runs a call
// of one of its keys where that key is (at the source while it is there;
// else, moved or new, at the target), and a call of several only on a
// node that holds them all, answering TRYAGAIN otherwise, having run
// nothing. A cross-slot reservation names its marker, a key no node holds
// yet, and is refused so: when its checks on the slot are one key of a
// kind kept in one key (fixed_window, sliding_window, token_bucket,
// leaky_bucket, leaky_queue), the store sends it again without its marker,
// naming that key alone, and the Take is decided as the memory store
// decides it, whether the key is still at the source, moved, or new
// (TestCrossSlotTakeWhileSlotMigrates, where concurrent ones admit no more
// than the limit). Without its marker, such a reservation that go-redis
// sends again after its reply was lost runs twice and consumes twice,
// erring towards denying; so does one that got no reply, which the store
// sends again to undo it (see "Failures"): its undo gives back the units
// of the run sent again, and those of the first stay consumed, the Take's
// error saying that the slot's reservation may have been left in place
// (TestCrossSlotResendWithoutMarkerSaysLeft). Its undo (another slot denied) names that key
// alone too, and runs, but for a token_bucket or leaky_bucket key whose
// undo must note a give-back (see "Keys and expiry": a reservation
// counted on top of it, or a request since), which needs the note key:
// that undo fails, having written nothing, and its reservation stays
// consumed until the key's state expires, erring towards denying (the
// Take's error names the slot, as for any failed undo). Left: a call of
// several keys of the slot not all on one node (any of them new, or moved
// while another is not) fails with TRYAGAIN, once go-redis's retries are
// spent: a cross-slot Take with a sliding_log or sliding_buckets check on
// the slot (their reservations name side keys too), or several keys on it
// (two policies on one client key), its other slots' reservations undone;
// and a plain Take or Peek of such keys, a new sliding_log's included;
// a GiveBack of a token_bucket or leaky_bucket key, and a Reset of a key
// of a kind other than fixed_window, sliding_window and leaky_queue, each
// of which names the key's note key or side key (see "Keys and
// expiry"), which a node seldom holds (TestGiveBackWhileSlotMigrates). A
// client that follows no redirection (MaxRedirects -1) gets ASK instead
// in every call of a key moved or new. A
// cross-slot undo refused so is sent again, backing off, until its
// context ends (see "Cluster"): one whose slot's migration ends by then
// runs; else its reservation stays consumed. A Peek, and a Take, of one
// key of the slot, or of keys all on one node, are decided meanwhile. The
// middleware answers such a Take by its failure mode; none of these
// failures counts for the store's circuit breaker ([WithCircuitBreaker]):
// Redis answered, and serves the other slots. Their errors match
// [algorithms.ErrTryAgain], by which the middleware's breaker
// (middleware.WithBreaker, on by default) does not count them either
// (TestClusterBreakerClosedWhileSlotMigrates). A client still pointing
// at a demoted master gets errors (READONLY, MOVED), never its decisions.
//
// What a Take waits for during a Cluster failover: the store itself waits
// for no slot to be reassigned (it does not loop on MOVED, CLUSTERDOWN or
// TRYAGAIN, but for a cross-slot undo within the undo's context: go-redis
// follows a redirection, and retries those, at most MaxRedirects times a
// call), so each Take fails or decides within its
// deadline: the caller's, or [WithTimeout]'s, for its calls, and for a
// cross-slot Take not every reservation of which admitted, as long again
// for the resends and undos of its reservations (on a context of their own:
// [WithTimeout]'s duration, else a second). Until a replica has taken over
// and the client's slot map follows it (a call without a reply reloads it,
// as does, at most once a second, a call the lost master's open circuit
// refuses: see [WithCircuitBreaker]), every Take of the lost master's
// slots fails; a cluster that cannot fail
// over (a replica whose master's config epoch it never heard, which no
// master votes for; one disconnected for longer than
// cluster-replica-validity-factor allows) leaves them failing, not waiting.
// A caller without a deadline, of a store built with WithTimeout(0) (no
// timeout; [DefaultTimeout] applies otherwise), waits instead for as long
// as the client's options let each call run: its dials, reads and writes
// within their timeouts, its retries and redirections; with go-redis's
// defaults that bound is about nine minutes a call (the bound the store
// computes for a reservation's marker), each phase of a cross-slot Take a call, and a refused dial (a dead node
// on a live host) fails quickly (TestClusterFailover bounds every Take it
// makes, and its wait for the failover, and fails with the nodes' view when
// the switch does not come).
//
// [WithCircuitBreaker] stops sending to a failing Redis for a cool-down,
// returning [ErrCircuitOpen] at once, then lets one probe through. On a
// Cluster it is one breaker per master node: a master that fails costs
// the calls of its slots only, the other masters' keys decided as
// before, and a cross-slot Take that touches its slots fails whole,
// unsent (see its documentation). It is
// off by default: the middleware has a breaker of its own, on by default
// (middleware.WithBreaker: 5 failures in a row open it for 5 s), which
// keeps a failing store from adding its timeout to every request, and a
// second one in the store would only open on the same failures. Turn it
// on for a store called outside a middleware, or behind one whose
// breaker is off; and on a Cluster, for one master's failure to cost
// only its keys, with fewer failures than the middleware's (say
// WithCircuitBreaker(3, 5*time.Second) under its default 5): the
// middleware's breaker is one for the store, and counts the failed calls
// of a dead master's keys, which a run of other keys' successes ends, but
// not the store's ErrCircuitOpen (it matches [algorithms.ErrCircuitOpen]),
// which neither ends a run nor counts in one, so that once the store's
// breaker opens for that master the middleware's stays closed for the
// others (TestMiddlewareBreakerClosedWhileOneMasterIsDown). It
// counts the calls Redis did not answer, not those their caller ended: a
// cancelled call, or one whose caller's deadline passed before Redis had a
// fair chance, does not count (see its documentation). Whether to fail
// open or closed is the caller's choice (the middleware offers both).
// After an outage, go-redis itself may refuse to dial for up to a second
// once Redis is back: after as many failed dials as its pool size, it
// fails every dial at once with the last dial's error until its own
// background dial, once a second, succeeds. A probe in that second fails,
// and the circuit stays open for another cooldown.
//
// [WithDenyCache] keeps recent denials in process memory and answers a
// repeat of a denied Take locally until its RetryAfter, with no round trip;
// it only ever denies, and only while Redis would (on a Cluster, a denial
// caused by another process's cross-slot reservation that is then undone
// is kept until its RetryAfter; this process's undos drop its denials of
// the keys they give back).
//
// A Store is safe for concurrent use.
package redisstore
