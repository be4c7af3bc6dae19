//go:build !unix

package logfile

// openFlags: no O_NOFOLLOW here; Tail still refuses what is not a
// regular file.
const openFlags = 0

func isLink(error) bool { return false }
