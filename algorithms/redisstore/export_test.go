package redisstore

// OnReload has f called each time s has its cluster client reload its
// slot map (reloadSlots), for the tests of package redisstore_test. It
// must be called before s is used.
func OnReload(s *Store, f func()) { s.onReload = f }
