package redisstore

import (
	"context"
	"errors"

	"github.com/ratekeeper/ratekeeper/algorithms"
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

func (s *Store) runSplit(ctx context.Context, r *request, dst []algorithms.Decision) error {
	return errors.New("redisstore: multi-slot takes not implemented yet")
}
