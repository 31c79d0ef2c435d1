//go:build !unix

package outfile

import "io/fs"

// ownership returns the hard links, owner and group of the file fi
// describes; ok is false when the system does not say, as here.
func ownership(fs.FileInfo) (links uint64, uid, gid int, ok bool) { return 0, 0, 0, false }
