package redisstore

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua sources. As a script (takeScript) they run in this order: the
// arithmetic, the parsed checks, the fast path's helpers and the fast path
// (which returns early for a plain Take, before the other helpers' closures
// are made), the kinds, the general path's helpers, its driver last. As a
// library (takeLibrary) every helper file is at the top level and only the
// fast path and the driver run per call. Each kind mirrors its Go
// transition in package algorithms line by line.
var (
	//go:embed lua/std.lua
	luaStd string
	//go:embed lua/num.lua
	luaNum string
	//go:embed lua/spec.lua
	luaSpec string
	//go:embed lua/fastlib.lua
	luaFastLib string
	//go:embed lua/fast.lua
	luaFast string
	//go:embed lua/cell.lua
	luaCell string
	//go:embed lua/log.lua
	luaLog string
	//go:embed lua/buckets.lua
	luaBuckets string
	//go:embed lua/notes.lua
	luaNotes string
	//go:embed lua/cluster.lua
	luaCluster string
	//go:embed lua/refund.lua
	luaRefund string
	//go:embed lua/mainlib.lua
	luaMainLib string
	//go:embed lua/giveback.lua
	luaGiveBack string
	//go:embed lua/main.lua
	luaMain string
)

// takeScript decides every check of one Take, run as a script: EVALSHA,
// and EVAL on NOSCRIPT. It is the fallback for servers without functions
// (before Redis 7) or users not allowed to load them: every helper's
// closure is made anew on each call.
var takeScript = redis.NewScript(takeScriptSource)

// takeScriptSource is takeScript's code: the files in a function, which
// luaReplicaCheck follows.
var takeScriptSource = luaPrelude + "\nlocal function take()\n" +
	strings.Join([]string{luaNum, luaSpec, luaFastLib, luaFast, luaCell, luaLog, luaBuckets, luaNotes, luaCluster, luaRefund, luaMainLib, luaGiveBack, luaMain}, "\n") +
	"\nend\n" + luaReplicaCheck

// luaReplicaCheck ends the script: a Take (mode 0, compact or wide, or a
// reservation, mode 1) that it denied wrote nothing, so a read-only
// replica, which refuses a write as it comes, ran it to the end; there its
// decision is one of a copy that lags the master (a demoted master that a
// client still points at, after a failover), and the script fails instead,
// READONLY, as the function does at once on a replica and as an admitted
// Take does at its first write (TestSentinelDemotedMaster). It asks INFO
// only then: a Take denied on a master (one at its maxmemory included)
// stands, as does one of a user not allowed INFO. A Peek (modes 3 and 6)
// is answered on a replica (see Store.Peek). It reads the first 4 entries
// per check of the reply, no more: the fast path's reply is a table it
// reuses from call to call, ended by a nil, past which an earlier call's
// entries remain (the length operator may count them).
const luaReplicaCheck = `local argv = ARGV
local r = take()
if type(r) ~= 'table' or r.err then return r end
local h, mode, n = argv[1], 0, #argv
if sub(h, 1, 2) == 'c ' then
  n = #argv - 1
elseif #h <= 11 then
  mode, n = tonumber(argv[4]), tonumber(argv[5])
end
if mode ~= 0 and mode ~= 1 then return r end
for i = 1, 4 * n, 4 do
  local v = r[i]
  if type(v) ~= 'number' then return r end
  if v % 2 == 0 then
    local info = redis.pcall('INFO', 'replication')
    if type(info) == 'string' and string.find(info, 'role:slave', 1, true) then
      return redis.error_reply('READONLY redisstore: a replica does not decide a Take (its state lags the master)')
    end
    return r
  end
end
return r`

// luaPrelude makes KEYS and ARGV locals, which fast.lua may replace (a
// compact call rewritten into the wide layout), and binds std.lua's locals
// at once (a script can reach the libraries from its first line).
const luaPrelude = "local KEYS, ARGV = KEYS, ARGV\n" +
	"local tonumber, floor, max, format, match, sub, call, unpack = " +
	"tonumber, math.floor, math.max, string.format, string.match, string.sub, redis.call, unpack"

// The same code as a Redis function library (FUNCTION LOAD, FCALL): the
// helpers and their closures are made once, when the library loads, and
// spec.lua's table keeps the parsed checks; each call runs only fast.lua
// and main.lua. The names carry a hash of the code, so that two versions of
// the store share a server without replacing each other's library.
//
// The library registers the code twice: as takeFunction, which may write,
// and as peekFunction, flagged no-writes, which a Peek calls (it writes
// nothing: TestPeekWritesNothing). A server refusing writes, at its
// maxmemory (OOM) or a read-only replica, refuses a function that may
// write whole, however little it would write, but runs one that cannot
// (TestPeekNeedsNoWrites).
var takeLibrary, takeFunction, peekFunction = library()

func library() (code, take, peek string) {
	helpers := strings.Join([]string{"local KEYS, ARGV", luaStd, luaNum, luaSpec, luaFastLib, luaCell, luaLog, luaBuckets, luaNotes, luaCluster, luaRefund, luaMainLib, luaGiveBack, "memoOn = true -- fastlib.lua"}, "\n")
	body := strings.Join([]string{luaFast, luaMain}, "\n")
	const registered = "take; peek no-writes" // the functions, in the hash too
	sum := sha1.Sum([]byte(helpers + "\x00" + body + "\x00" + registered))
	h := hex.EncodeToString(sum[:8])
	take, peek = "ratekeeper_take_"+h, "ratekeeper_peek_"+h
	code = "#!lua name=ratekeeper_" + h + "\n" + helpers +
		"\nlocal function run(keys, args)\nKEYS, ARGV = keys, args\nif not call then bindStd() end\n" + body + "\nend\n" +
		"redis.register_function('" + take + "', run)\n" +
		"redis.register_function{function_name = '" + peek + "', callback = run, flags = {'no-writes'}}\n"
	return code, take, peek
}

// Kind codes understood by the script.
const (
	codeFixed   = 1
	codeLog     = 2
	codeSliding = 3
	codeBuckets = 4
	codeToken   = 5
	codeLeaky   = 6
	codeQueue   = 7
)

// replyWidth is the number of integers the script returns per check (see
// decodeDecision).
const replyWidth = 4
