package middleware_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// This file holds the cluster side of the store differential: a Redis
// store on a three-node Redis Cluster (one per test, each trace under a
// store prefix of its own), where a request whose policies are keyed
// differently (IP, header, IP and user) has its checks on several slots:
// its Take peeks every slot, reserves every slot, and undoes the slots
// that admitted when another denies (redisstore, "Cluster").

// The script modes of redisstore's calls (store.go, giveback.go, refund.go,
// peek.go), as the hook reads them.
const (
	sdModeReserve  = 1
	sdModeUndo     = 2
	sdModePeek     = 3 // a cross-slot Take's first phase
	sdModeRefund   = 4
	sdModeGiveBack = 5
	sdModes        = 7
)

// sdScriptMode returns the mode of a call of redisstore's function or
// script in the wide layout (every cross-slot phase, give-back and refund
// is; a plain Take's compact layout has no int there).
func sdScriptMode(cmd redis.Cmder) (int, bool) {
	args := cmd.Args()
	if n := cmd.Name(); len(args) <= 3 || (n != "fcall" && n != "fcall_ro" && n != "evalsha" && n != "eval") {
		return 0, false
	}
	nk, ok := args[2].(int)
	if !ok || len(args) <= 3+nk+3 {
		return 0, false
	}
	mode, ok := args[3+nk+3].(int)
	return mode, ok && mode >= 0 && mode < sdModes
}

// sdHook watches the cluster side's calls: it counts them by mode for the
// request being served (an interloper's apart), and, armed with an
// interloper, serves it on the first reservation of a cross-slot Take,
// before any of that Take's slots reserves (the others wait for it). The
// interloper is a request arriving between the Take's phases: it sees the
// state the Take peeked, and the Take's reservations see what it consumed,
// so that a slot may now deny while another admits, and the Take undoes
// the admitting slots. The memory store, which decides a Take at once,
// serves the interloper just before the request: the order the cluster
// decided them in, so the responses must be the same.
type sdHook struct {
	redistest.PassHooks
	mu    sync.Mutex
	calls [2][sdModes]int // this step's calls by mode: [0] the request's, [1] its interloper's
	keys  [2][]string     // the kinds of the keys reserved [0] and undone [1] ("sl", "tb"; "sl twice" for a key met twice in a call)
	arm   *sdInterlope
}

// sdKeyKinds returns the kinds of the keys of a call (their algorithm's
// code in the key: "fw", "sl", ...), a key met twice in it as "<code> twice",
// side keys (":u") and log lists (":l") left out.
func sdKeyKinds(cmd redis.Cmder) []string {
	args := cmd.Args()
	nk := args[2].(int)
	seen := map[string]bool{}
	var out []string
	for _, a := range args[3 : 3+nk] {
		k, _ := a.(string)
		if strings.HasSuffix(k, ":u") || strings.HasSuffix(k, ":l") {
			continue
		}
		i := strings.Index(k, "}:")
		if i < 0 {
			continue
		}
		parts := strings.Split(k[i+2:], ":")
		code := parts[0]
		if len(parts) > 1 && len(parts[1]) == 2 {
			code = parts[1] // after the policy's namespace
		}
		if seen[k] {
			code += " twice"
		}
		seen[k] = true
		out = append(out, code)
	}
	return out
}

// sdInterlope is an interloper armed on a hook.
type sdInterlope struct {
	once  sync.Once
	serve func() // serves the interloper and keeps its response
	fired atomic.Bool
}

func (h *sdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		mode, ok := sdScriptMode(cmd)
		if !ok {
			return next(ctx, cmd)
		}
		inter := ctx.Value(sdInterloperKey{}) != nil
		h.mu.Lock()
		h.calls[b2i(inter)][mode]++
		if mode == sdModeUndo || mode == sdModeReserve {
			kinds := sdKeyKinds(cmd)
			if len(kinds) >= 2 {
				kinds = append(kinds, "(a slot of several keys)")
			}
			h.keys[mode-1] = append(h.keys[mode-1], kinds...)
		}
		a := h.arm
		h.mu.Unlock()
		if mode == sdModeReserve && !inter && a != nil {
			a.once.Do(func() {
				a.serve()
				a.fired.Store(true)
			})
		}
		return next(ctx, cmd)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// takeCalls returns the calls counted since the last takeCalls and
// disarms the hook.
func (h *sdHook) takeCalls() ([2][sdModes]int, [2][]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, k := h.calls, h.keys
	h.calls, h.keys = [2][sdModes]int{}, [2][]string{}
	h.arm = nil
	return c, k
}

func (h *sdHook) arming(a *sdInterlope) {
	h.mu.Lock()
	h.arm = a
	h.mu.Unlock()
}

// sdClusterStore returns a Redis store on cl reading clock, under prefix
// (the trace's own), with a deny cache when deny, and the hook added to
// its client. The client is closed when the trace ends (done).
func sdClusterStore(t *testing.T, cl *redistest.Cluster, clock algorithms.Clock, prefix string, deny bool, h *sdHook) (algorithms.Store, func()) {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	cc.AddHook(h)
	return sdStoreOn(t, cc, clock, prefix, deny)
}

// sdClusterCover counts what the cluster side went through: the Takes
// (the requests', not their interlopers') split over several slots, those
// that reserved (every slot admitted in the peek), those undone (a slot
// denied in the reservation, another admitted), the interlopers served,
// and the give-backs and refunds split over several keys' calls.
type sdClusterCover struct {
	split, reserved, undone, undos, interlopers, splitGiveBacks, splitRefunds int
	// The keys reserved and undone, by kind.
	reservedKeys, undoneKeys map[string]int
}

// count counts a request's calls and reports whether its Take was undone.
func (c *sdClusterCover) count(calls [2][sdModes]int, keys [2][]string) (undone bool) {
	if c.reservedKeys == nil {
		c.reservedKeys, c.undoneKeys = map[string]int{}, map[string]int{}
	}
	for _, k := range keys[0] {
		c.reservedKeys[k]++
	}
	for _, k := range keys[1] {
		c.undoneKeys[k]++
	}
	own := calls[0]
	if own[sdModePeek] >= 2 {
		c.split++
	}
	if own[sdModeReserve] >= 2 {
		c.reserved++
	}
	if own[sdModeUndo] > 0 {
		c.undone++
		c.undos += own[sdModeUndo]
	}
	for _, k := range calls {
		if k[sdModeGiveBack] >= 2 {
			c.splitGiveBacks++
		}
		if k[sdModeRefund] >= 2 {
			c.splitRefunds++
		}
	}
	return own[sdModeUndo] > 0
}

func (c sdClusterCover) String() string {
	return strconv.Itoa(c.split) + " split over slots, " + strconv.Itoa(c.reserved) + " reserved, " +
		strconv.Itoa(c.undone) + " undone (" + strconv.Itoa(c.undos) + " slots), " + strconv.Itoa(c.interlopers) + " interlopers served, " +
		strconv.Itoa(c.splitGiveBacks) + " give-backs and " + strconv.Itoa(c.splitRefunds) + " refunds over several keys; keys reserved " +
		fmt.Sprint(c.reservedKeys) + ", undone " + fmt.Sprint(c.undoneKeys)
}
