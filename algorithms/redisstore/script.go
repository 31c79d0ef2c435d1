package redisstore

import (
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The Lua sources, concatenated into one script in this order: the
// arithmetic, the fast path (which returns early for a plain Take, before
// the other helpers' closures are made), the helpers, the driver last. Each kind mirrors its Go transition in package
// algorithms line by line.
var (
	//go:embed lua/num.lua
	luaNum string
	//go:embed lua/fast.lua
	luaFast string
	//go:embed lua/cell.lua
	luaCell string
	//go:embed lua/log.lua
	luaLog string
	//go:embed lua/buckets.lua
	luaBuckets string
	//go:embed lua/cluster.lua
	luaCluster string
	//go:embed lua/main.lua
	luaMain string
)

// takeScript decides every check of one Take. It is loaded once per server
// and run with EVALSHA (go-redis falls back to EVAL on NOSCRIPT).
var takeScript = redis.NewScript(strings.Join([]string{luaNum, luaFast, luaCell, luaLog, luaBuckets, luaCluster, luaMain}, "\n"))

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

// replyWidth is the number of integers the script returns per check.
const replyWidth = 6
