package loadtest

import (
	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// EnvRequireRedis is the environment variable that turns a missing
// redis-server from a skip into a failure (CI sets it).
const EnvRequireRedis = redistest.EnvRequire

// RedisBinary returns the path of redis-server, or an error saying why there
// is none.
func RedisBinary() (string, error) { return redistest.Binary() }

// A Redis is a redis-server process started by [StartRedis].
type Redis struct {
	// Addr is the server's 127.0.0.1:port.
	Addr string

	srv *redistest.Server
}

// StartRedis starts a redis-server on a free loopback port, working in dir,
// with persistence off, and returns once it answers PING. It never uses a
// server it did not start (in particular not one on 6379). It is
// redistest.Start, usable outside tests.
func StartRedis(dir string) (*Redis, error) {
	srv, err := redistest.Start(dir)
	if err != nil {
		return nil, err
	}
	return &Redis{Addr: srv.Addr, srv: srv}, nil
}

// Client returns a new go-redis client for r with a connection pool of size
// pool.
func (r *Redis) Client(pool int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr, PoolSize: pool, MinIdleConns: min(pool, 8)})
}

// Stop kills the server and waits for it to exit. It is idempotent.
func (r *Redis) Stop() error { return r.srv.Stop() }
