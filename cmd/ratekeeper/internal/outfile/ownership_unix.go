//go:build unix

package outfile

import (
	"io/fs"
	"syscall"
)

// ownership returns the hard links, owner and group of the file fi
// describes; ok is false when the system does not say.
func ownership(fi fs.FileInfo) (links uint64, uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Nlink), int(st.Uid), int(st.Gid), true
}
