// Package redisstore keeps rate-limiting state in Redis, so that several
// application instances share one limit. [Store] implements
// [algorithms.Store] and [algorithms.IntoStore] with the seven algorithms of
// package algorithms, deciding exactly as [algorithms.MemoryStore] does:
// every Decision field, to the nanosecond.
package redisstore
