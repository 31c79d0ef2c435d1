package redistest

import "github.com/redis/go-redis/v9"

// PassHooks passes dials and pipelines through unchanged. A test's
// redis.Hook that only watches or alters single commands embeds it and
// defines ProcessHook alone.
type PassHooks struct{}

// DialHook returns next.
func (PassHooks) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook returns next.
func (PassHooks) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
