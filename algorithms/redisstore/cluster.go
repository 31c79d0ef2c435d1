package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// oneSlot reports whether every key of r hashes to the same cluster slot.
func (r *request) oneSlot() bool {
	if len(r.tags) < 2 {
		return true
	}
	s := slot(r.tags[0])
	for _, t := range r.tags[1:] {
		if slot(t) != s {
			return false
		}
	}
	return true
}

// slot returns the Redis Cluster slot of a hash tag: CRC16 (XMODEM) mod 16384.
func slot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc & 16383
}

// runSplit decides a Take whose keys span several cluster slots, in two
// phases of parallel per-slot script calls. Phase 1 peeks: each slot decides
// its checks without consuming or writing. If any check is denied, that is
// the answer (exactly the memory store's for a denied Take), and nothing was
// written. Otherwise phase 2 reserves: each slot decides again and consumes,
// all or nothing within the slot, returning how to undo its writes. When
// every slot admits, that is the answer. When a slot denies (another
// request consumed between the phases), the slots that admitted are undone
// and decide their checks again without consuming. An undo leaves a key
// as it was before the reservation (in its window, no event forgotten, no
// ring rolled, as after a denied Take), the reservations made since and
// not undone counted again, unless a request was counted in it since: then
// it subtracts the units where that is exact, and a bucket key may keep
// the consumption, erring towards denying (see lua/cluster.lua). A
// reservation that got no reply, or one the store cannot read, is sent
// again under its id first (its marker answers the run's reply), to be
// undone too. A failed Take whose undo failed too says which slot's
// reservation it left (leftError).
func (s *Store) runSplit(ctx context.Context, r *request, dst []algorithms.Decision) error {
	groups := slotGroups(r)
	if err := s.evalSlots(ctx, opTake, r, groups, modePeek, dst); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for i := range dst {
		if !dst[i].Allowed {
			return nil
		}
	}
	res := make([]reservation, len(groups))
	// A call's panic (a client hook's) is raised on the caller's goroutine
	// once the other slots' reservations are undone: its slot's
	// reservation counts as failed, not sent again.
	panics := make([]any, len(groups))
	for g, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					panics[g], res[g] = p, reservation{err: errCallPanicked}
				}
			}()
			res[g] = s.reserve(ctx, r, idx, dst)
		}()
	}
	wg.Wait()
	defer raiseFirst(panics)
	for g, idx := range groups {
		r.note(idx, res[g].err)
	}
	var firstErr error
	all := true
	failed := make([]error, 0, len(groups)) // every reservation's error, for reloadSlots
	for _, rv := range res {
		if rv.err != nil && firstErr == nil {
			firstErr = rv.err
		}
		failed = append(failed, rv.err)
		all = all && rv.admitted
	}
	if firstErr == nil && all {
		return nil
	}
	// Undo the slots that admitted, on a context of its own: the caller's
	// may end now (or have ended, the reason of an error), and a reservation
	// left in place would consume for a Take that is not admitted. It is
	// bounded by the WithTimeout, if any (which promises prompt failure),
	// else by a second.
	undoTimeout := time.Second
	if s.timeout > 0 {
		undoTimeout = s.timeout
	}
	uctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), undoTimeout, errOwnDeadline)
	defer cancel()
	// A reservation that got no reply may have run all the same (a
	// caller's context that ended while it was at Redis, a reply lost),
	// and one whose reply the store cannot read did (mayHaveRun): it is
	// sent again, on uctx, under its id, and its marker answers the
	// reply of the run, undo records included, without running it again;
	// one that had not run runs then, once (a call of it still on its way
	// finds the marker). Either way it is undone like the others, in the
	// same goroutine: a resend that gets no reply delays no other undo.
	again := make([]error, len(groups))
	errs := make([]error, len(groups))
	undone := make([]bool, len(groups)) // the slots whose undo was sent
	// The slots whose unanswered reservation was sent without its marker
	// (its slot migrating: see reserveAs): sent again, it runs again if
	// it had run, and its undo gives back the second run only.
	twice := make([]bool, len(groups))
	for g, idx := range groups {
		rv := res[g]
		if !rv.unanswered && (rv.err != nil || !rv.admitted) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					panics[g] = p
				}
			}()
			if rv.unanswered {
				// The marker outlives both the original call's last
				// resend (rv.px, bound by the caller's context) and this
				// one's, whose go-redis retries run under uctx.
				twice[g] = rv.px == 0
				px := max(rv.px, ceilMillis(s.resend.markerLifetime(uctx, time.Now())))
				rv = s.reserveAs(uctx, r, idx, dst, rv.id, px, true)
				if again[g] = rv.err; rv.err != nil || !rv.admitted {
					return
				}
			}
			undone[g] = true
			errs[g] = s.undo(uctx, r, idx, rv, dst)
		}()
	}
	wg.Wait()
	for g, idx := range groups {
		if again[g] != nil {
			r.note(idx, again[g])
		}
		if undone[g] {
			r.note(idx, errs[g])
		}
	}
	// An undo gives units back, as a give-back does: this process's
	// denials of those keys (a Take of this store denied by the
	// reservation meanwhile) must not outlive it (WithDenyCache).
	if s.deny != nil {
		var given []algorithms.Check
		for g, idx := range groups {
			if undone[g] {
				for _, i := range idx {
					given = append(given, r.checks[i])
				}
			}
		}
		s.deny.forget(given)
	}
	// The resends and undos ran on uctx, whose end is the store's own.
	if s.cluster != nil && (noReply(ctx, failed) || noReply(uctx, again) || noReply(uctx, errs)) {
		s.reload()
	}
	var left []error // the failed undos and resends, each naming its slot
	for g, err := range again {
		if err != nil {
			left = append(left, fmt.Errorf("redisstore: the cross-slot reservation of slot %d may have been left in place, its units consumed for a Take not admitted until its keys' state expires: it got no reply the store could read, and sending it again failed: %w", slot(r.tags[groups[g][0]]), err))
		}
	}
	for g, err := range errs {
		if twice[g] && err == nil && again[g] == nil {
			left = append(left, fmt.Errorf("redisstore: the cross-slot reservation of slot %d may have been left in place, its units consumed for a Take not admitted until its keys' state expires: it got no reply, and was sent again without its marker (its slot migrating), which runs it again if it had run", slot(r.tags[groups[g][0]])))
		}
		if err == nil {
			continue
		}
		// Refused (an error Redis replied: the script fails before it
		// writes), the undo did not run; without a reply, or with one
		// the store cannot read (redis.Nil included), it may have.
		was := "may have been"
		if !mayHaveRun(err) {
			was = "was"
		}
		left = append(left, fmt.Errorf("redisstore: the cross-slot reservation of slot %d %s left in place, its units consumed for a Take not admitted until its keys' state expires: undoing it failed: %w", slot(r.tags[groups[g][0]]), was, err))
	}
	switch {
	case len(left) == 0:
		return firstErr
	case firstErr != nil:
		return &leftError{err: firstErr, undos: left}
	case len(left) == 1:
		return left[0]
	}
	return errors.Join(left...)
}

// errCallPanicked stands for the outcome of a cross-slot reservation whose
// call panicked (a client hook's panic), until runSplit raises the panic.
var errCallPanicked = errors.New("redisstore: the call panicked")

// raiseFirst panics with the first non-nil of panics, recovered on the
// store's own goroutines of one call, on the caller's goroutine.
func raiseFirst(panics []any) {
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
}

// leftError is the error of a cross-slot Take whose reservation failed on
// a slot (err) and whose undo of another slot's admitted reservation
// failed too (undos, each naming the slot whose reservation stays
// consumed). errors.Is and errors.As see them all; what the error is
// classified as (algorithms.ErrKeyState, a failure of Redis for the
// breaker, the store's own deadline: keyError, ownDeadline) is err's, the
// Take's own error, as when no undo failed: an undo's reply about a key
// does not make a reservation that got no reply an answer about a key.
type leftError struct {
	err   error
	undos []error
}

func (e *leftError) Error() string {
	var b strings.Builder
	b.WriteString(e.err.Error())
	for _, u := range e.undos {
		b.WriteString("; and ")
		b.WriteString(u.Error())
	}
	return b.String()
}

func (e *leftError) Unwrap() []error { return append([]error{e.err}, e.undos...) }

// note notes err, the outcome of the part of a split call that ran the
// checks idx (of one slot), for the breaker of the slot's node (see
// pass.note). Without node breakers it does nothing.
func (r *request) note(idx []int, err error) {
	if r.pass != nil {
		r.pass.note(slot(r.tags[idx[0]]), err)
	}
}

// slotGroups returns the indices of r's checks grouped by cluster slot, the
// groups in the order of their first check.
func slotGroups(r *request) [][]int {
	var groups [][]int
	bySlot := make(map[uint16]int)
	for i, tag := range r.tags {
		sl := slot(tag)
		g, ok := bySlot[sl]
		if !ok {
			g = len(groups)
			bySlot[sl] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// evalSlots runs the script in a deciding mode that writes no consumption
// (modePeek, modePeekAlone) for the checks of each of groups, one call per
// group, in parallel, decoding into dst, and returns the first error,
// having the client reload its slot map when any call got no reply
// (reloadSlots). op names the call in errors.
func (s *Store) evalSlots(ctx context.Context, op string, r *request, groups [][]int, mode int, dst []algorithms.Decision) error {
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	panics := make([]any, len(groups))
	for g, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[g] = recover() }()
			errs[g] = s.evalDecisions(ctx, op, r, idx, mode, dst)
		}()
	}
	wg.Wait()
	raiseFirst(panics) // a client hook's, say: the caller's, as on its goroutine
	for g, idx := range groups {
		r.note(idx, errs[g])
	}
	s.reloadSlots(ctx, errs...)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// evalDecisions runs the script in mode for the checks idx of r (all when
// nil), decoding its decisions into dst.
func (s *Store) evalDecisions(ctx context.Context, op string, r *request, idx []int, mode int, dst []algorithms.Decision) error {
	v, err := s.eval(ctx, op, s.client, r.keysOf(idx), r.args(idx, mode))
	if err != nil {
		return err
	}
	return parseDecisions(v, r, idx, dst)
}

// reservation is the outcome of phase 1 for one slot.
type reservation struct {
	admitted bool
	id       string // names the reservation in its keys' side keys
	ts, tn   int64
	undo     []any // the undo records, as the script returned them
	err      error
	// px is the lifetime of its marker (ms); unanswered, that its call
	// failed without a reply of Redis the store could read: it may have
	// run (mayHaveRun; see runSplit).
	px         int64
	unanswered bool
}

// reservationID returns a new reservation id: 64 random bits in hex. The
// side key of a sliding_log or sliding_buckets key lists its reservations
// by id (see lua/cluster.lua).
func reservationID() string {
	return fmt.Sprintf("%016x", rand.Uint64())
}

// sideKeysOf returns r.keysOf(idx) followed by the side key (":u") of
// each sliding_log and sliding_buckets key of the checks idx, and the
// note key (":g") of each token_bucket and leaky_bucket key: a
// reservation and its undo read and write them (see lua/cluster.lua and
// lua/notes.lua; a give-back declares the note keys alone: noteKeysOf).
// idx nil means every check.
func (r *request) sideKeysOf(idx []int) []string {
	ks := r.keysOf(idx)
	side := func(i int) {
		switch r.infos[i].code {
		case codeLog, codeBuckets:
			ks = append(ks, r.keys[r.first[i]]+":u")
		case codeToken, codeLeaky:
			ks = append(ks, r.keys[r.first[i]]+":g")
		}
	}
	if idx == nil {
		for i := range r.checks {
			side(i)
		}
		return ks
	}
	for _, i := range idx {
		side(i)
	}
	return ks
}

// reserve runs the reservation of the checks idx. go-redis sends it again
// when its reply is lost after it ran (io.EOF, a read timeout): so that it
// consumes once, a reservation also writes its reply at its marker (a
// denied one too: see runSplit's resend), its first key plus ":r" and its id, for as long as go-redis may
// still send the call again (markerLifetime; main.lua); a call that finds
// its marker answers that reply and runs nothing. The undo then gives back
// the one run (see doc.go, "Failures").
func (s *Store) reserve(ctx context.Context, r *request, idx []int, dst []algorithms.Decision) reservation {
	return s.reserveAs(ctx, r, idx, dst, reservationID(), ceilMillis(s.resend.markerLifetime(ctx, time.Now())), false)
}

// reserveAs runs the reservation of the checks idx under id, its marker
// living px ms; with mustRun, even after Close (see evalOr). A call that
// may have run without the store reading its outcome (no reply, or one
// it cannot read: mayHaveRun) is marked unanswered, for runSplit to send
// again under id and undo; one the store never sent is not.
//
// While its slot migrates (CLUSTER SETSLOT MIGRATING and IMPORTING),
// Redis runs a call of several keys only on the node that holds them all,
// which the marker, a key no node holds yet, never lets happen: it answers
// TRYAGAIN (or ASK, to a client that follows no redirection), having run
// nothing. A reservation whose checks are one key of a kind kept in one
// key (oneKey) is then sent again without its marker, naming that key
// only, which Redis runs on the node that holds it (the source while it is
// there, else the target: a new key, or one moved); go-redis sending that
// call again when its reply is lost would consume twice, erring towards
// denying. Other reservations fail with Redis's error.
func (s *Store) reserveAs(ctx context.Context, r *request, idx []int, dst []algorithms.Decision, id string, px int64, mustRun bool) reservation {
	keys := append(r.sideKeysOf(idx), r.keys[r.first[idx[0]]]+":r"+id)
	v, err := s.evalOr(ctx, opTake, s.client, keys, append(r.args(idx, modeReserve), id, px), mustRun, false, nil)
	if err != nil && slotMigrating(err) && r.oneKey(idx) {
		px = 0
		v, err = s.evalOr(ctx, opTake, s.client, r.keysOf(idx), append(r.args(idx, modeReserve), id, px), mustRun, false, nil)
	}
	rv := reservation{id: id, px: px}
	if err == nil {
		err = rv.read(v, r, idx, dst)
	}
	if err != nil {
		return reservation{err: err, id: id, px: px, unanswered: mayHaveRun(err)}
	}
	return rv
}

// slotMigrating reports whether err is Redis's refusal of a call of
// several keys of a slot that is migrating: TRYAGAIN, or ASK for a client
// that does not follow it. Either way the call did not run.
func slotMigrating(err error) bool {
	_, ask := redis.IsAskError(err)
	return ask || redis.IsTryAgainError(err)
}

// oneKey reports whether the checks idx of r all name one key whose kind
// keeps its state in that key alone (fixed_window, sliding_window,
// token_bucket, leaky_bucket, leaky_queue): their reservation reads and
// writes no other key than it and its marker (lua/main.lua,
// lua/cluster.lua's mark), and so runs without the marker.
func (r *request) oneKey(idx []int) bool {
	for _, i := range idx {
		if c := r.infos[i].code; c == codeLog || c == codeBuckets || r.keys[r.first[i]] != r.keys[r.first[idx[0]]] {
			return false
		}
	}
	return true
}

// read reads a reservation's reply v for the checks idx: their decisions
// into dst, and into rv whether all admitted, the instant decided at and
// the undo records. Every assertion is checked: a surprise is an error.
func (rv *reservation) read(v any, r *request, idx []int, dst []algorithms.Decision) error {
	if err := parseDecisions(v, r, idx, dst); err != nil {
		return err
	}
	vals, ok := v.([]any)
	if !ok {
		return fmt.Errorf("redisstore: unexpected reservation reply %T", v)
	}
	rest := vals[replyWidth*len(idx):]
	rv.admitted = true
	for _, i := range idx {
		rv.admitted = rv.admitted && dst[i].Allowed
	}
	if len(rest) < 3 {
		return fmt.Errorf("redisstore: reservation reply has %d trailing values, want at least 3", len(rest))
	}
	var ok1, ok2, ok3 bool
	var n int64
	rv.ts, ok1 = rest[0].(int64)
	rv.tn, ok2 = rest[1].(int64)
	n, ok3 = rest[2].(int64)
	if !ok1 || !ok2 || !ok3 || n < 0 || int64(len(rest)-3) != 7*n {
		return fmt.Errorf("redisstore: malformed reservation reply %v", rest)
	}
	rv.undo = rest[3:]
	for _, x := range rv.undo {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("redisstore: malformed undo record value %v (%T)", x, x)
		}
	}
	return nil
}

// mayHaveRun reports whether a script call that failed with err may have
// run at Redis all the same, what it wrote unknown to the store: it got no
// reply (a connection lost, a deadline met, a context ended after it was
// sent), or one the store cannot read (redis.Nil, a reply of the wrong
// shape: Redis answered, so the call reached it). An error Redis replied
// did not run it (the script fails before it writes), and a call the
// store never sent did not reach Redis: one met by a closed store
// (algorithms.ErrClosed) or an open circuit (ErrCircuitOpen). A
// cross-slot reservation that may have run is sent again under its id
// and undone, and a failed undo that may have run is named so (runSplit).
func mayHaveRun(err error) bool {
	if err == nil || unsent(err) {
		return false
	}
	var reply redis.Error
	return !errors.As(err, &reply) || errors.Is(err, redis.Nil)
}

// unsent reports whether err is that of a call the store never sent:
// refused by a closed store or an open circuit.
func unsent(err error) bool {
	return errors.Is(err, algorithms.ErrClosed) || errors.Is(err, ErrCircuitOpen)
}

func (s *Store) undo(ctx context.Context, r *request, idx []int, rv reservation, dst []algorithms.Decision) error {
	args := r.args(idx, modeUndo)
	args[0], args[1] = rv.ts, rv.tn
	// The undo's instant: the server's TIME, or the injected clock's
	// reading now, in ns after the reservation's (the script cannot read
	// the injected clock; a bucket key's undo compares it with the key's
	// old instant: see cluster.lua).
	var clock any = "server"
	if r.hasT {
		clock = s.clock.Now().UnixNano() - (rv.ts*1e9 + rv.tn)
	}
	args = append(args, clock, rv.id, len(rv.undo)/7)
	args = append(args, rv.undo...)
	// An undo that declares a key no node holds yet (a token_bucket or
	// leaky_bucket key's note, ":g"; a side key) is refused while its slot
	// migrates (TRYAGAIN: see reserveAs), having run nothing. The undo of
	// one key of a kind kept in one key (oneKey) is then sent again
	// naming that key only, which Redis runs where the key is: without
	// its note key, an undo that must note a give-back fails before it
	// writes anything (lua/cluster.lua's noteless), its reservation left
	// consumed, erring towards denying. Another is sent again, backing
	// off, until the migration ends or ctx does.
	keys := r.sideKeysOf(idx)
	wait := 10 * time.Millisecond
	for {
		v, err := s.evalOr(ctx, opTake, s.client, keys, args, true, true, r.checks) // a give-back too: see forgetLater
		if err == nil {
			return parseDecisions(v, r, idx, dst)
		}
		if !slotMigrating(err) {
			return err
		}
		if own := r.keysOf(idx); len(keys) > len(own) && r.oneKey(idx) {
			keys = own
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// Bounds of a reservation marker's lifetime (see markerLifetime).
const (
	// markerMax is the longest a marker lives: the minute it lived
	// before its lifetime followed its call, so that it never costs more
	// memory than that. A call sent again later (possible only when its
	// context allows and the client's options do: see resendBound) runs
	// again and consumes twice, erring towards denying.
	markerMax = time.Minute
	// markerMargin is added to the bound of a call's last resend: for the
	// bytes of a write that ended by then still on their way (a lost
	// segment sent again after 200 and 400 ms), a context's timer firing
	// late, and a resend waiting at the server behind other commands.
	markerMargin = time.Second
	// unbounded stands for a phase the client's options do not bound.
	unbounded = time.Duration(math.MaxInt64)
)

// resendBound is what a cluster client's options say of how long go-redis
// may still send a call again after it first sent it (go-redis v9's
// ClusterClient.process and baseClient.processWithRetry: it sends a call
// again only from its retry loops, which stop at the call's context's
// deadline before each attempt: the backoff, the pool's turn, the wait
// for a dial). Its zero value knows nothing: the marker lives markerMax.
type resendBound struct {
	known bool
	// call bounds the time from a call's first send to its last resend's
	// arrival: each of its attempts, (MaxRedirects+1) × (the node
	// clients' MaxRetries+1), within its backoff, pool wait, dials,
	// handshake, write and read.
	call time.Duration
	// late bounds what the client may still send after the context's
	// deadline: nothing when ContextTimeoutEnabled bounds every write by
	// it (a write after it fails unsent); else a connection's handshake
	// under way at the deadline and the call's write after it, each within
	// the client's own timeouts.
	late time.Duration
}

// resendBoundOf returns the resendBound of a cluster client's options, as
// go-redis leaves them (ClusterOptions.init) and derives its node clients'
// (clientOptions, newClusterNode, Options.init). A read or write lasts at
// most its timeout, or the relaxed timeout of maintenance notifications
// (RESP3, unless MaintNotificationsConfig disables them: 10 s by default)
// when longer. No timeout (0 or less), user code in the handshake
// (OnConnect, a credentials provider), a DialerRetryBackoff function, or
// a dial queue (MaxConcurrentDials below PoolSize) leave a phase
// unbounded. Other user code in a call (hooks, a Dialer, which gets the
// dial's context) is taken to end in time; a NewClient that changes the
// node clients' options is not seen.
func resendBoundOf(o *redis.ClusterOptions) resendBound {
	var relaxed time.Duration
	if mc := o.MaintNotificationsConfig; o.Protocol != 2 && (mc == nil || mc.Mode != maintnotifications.ModeDisabled) {
		relaxed = maintnotifications.DefaultConfig().RelaxedTimeout
		if mc != nil && mc.RelaxedTimeout > 0 {
			relaxed = mc.RelaxedTimeout
		}
	}
	io := func(d time.Duration) time.Duration {
		if d <= 0 {
			return unbounded
		}
		return max(d, relaxed)
	}
	read, write := io(o.ReadTimeout), io(o.WriteTimeout)
	backoff := max(o.MaxRetryBackoff, 0)
	// Each node client tries a command 1+retries times, backing off
	// between tries, and the cluster client tries it on a node
	// 1+redirects times (ClusterOptions.init left -1 for none).
	retries, redirects := int64(max(o.MaxRetries, 0)), int64(max(o.MaxRedirects, 0))
	tries := func(once, pause time.Duration, n int64) time.Duration {
		return satAdd(once, satMul(satAdd(pause, once), n))
	}
	roundTrip := satAdd(read, write)
	// A new connection's handshake: HELLO (or AUTH), the options'
	// commands, CLIENT MAINT_NOTIFICATIONS, CLIENT SETINFO, each a command
	// of the node client.
	handshake := satMul(tries(roundTrip, backoff, retries), 4)
	if o.OnConnect != nil || o.CredentialsProvider != nil || o.CredentialsProviderContext != nil || o.StreamingCredentialsProvider != nil {
		handshake = unbounded
	}
	pool := o.PoolTimeout
	if pool == 0 {
		pool = 30 * time.Second
		if o.ReadTimeout > 0 {
			pool = o.ReadTimeout + time.Second
		}
	}
	pool = max(pool, 0)
	dial := unbounded
	if o.DialTimeout > 0 && o.DialerRetryBackoff == nil && (o.MaxConcurrentDials <= 0 || o.MaxConcurrentDials >= o.PoolSize) {
		n := int64(o.DialerRetries)
		if n <= 0 {
			n = 5
		}
		pause := o.DialerRetryTimeout
		if pause <= 0 {
			pause = 100 * time.Millisecond
		}
		dial = tries(o.DialTimeout, pause, n-1)
	}
	// An attempt: its pool turn, a new connection, the call's write and
	// read; after each, a backoff before the next.
	attempt := satAdd(satAdd(pool, dial), satAdd(handshake, roundTrip))
	b := resendBound{known: true, call: tries(tries(attempt, backoff, retries), backoff, redirects)}
	if o.ContextTimeoutEnabled && o.WriteTimeout >= 0 {
		b.late = 0
	} else {
		b.late = satAdd(handshake, write)
	}
	return b
}

// markerLifetime returns how long the marker of a reservation sent at now
// under ctx lives: the bound of its last resend's arrival, the shorter of
// the time left to ctx's deadline (if any) plus b.late and b.call, plus
// markerMargin, and at most markerMax (markerMax too when b is not known).
// Redis counts it from the run, which comes after the first send.
func (b resendBound) markerLifetime(ctx context.Context, now time.Time) time.Duration {
	if !b.known {
		return markerMax
	}
	d := b.call
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, satAdd(max(dl.Sub(now), 0), b.late))
	}
	return min(satAdd(d, markerMargin), markerMax)
}

// satAdd returns a+b for a, b >= 0, or unbounded past it.
func satAdd(a, b time.Duration) time.Duration {
	if a > unbounded-b {
		return unbounded
	}
	return a + b
}

// satMul returns d*n for d >= 0 and n >= 0, or unbounded past it.
func satMul(d time.Duration, n int64) time.Duration {
	if n != 0 && d > unbounded/time.Duration(n) {
		return unbounded
	}
	return d * time.Duration(n)
}
