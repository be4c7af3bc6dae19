//go:build unix

package logfile

import (
	"errors"
	"syscall"
)

// openFlags open a log file for reading without following a symbolic
// link (its last element), and without blocking on a FIFO.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLink reports whether err is an open with openFlags refused because
// the name is a symbolic link.
func isLink(err error) bool { return errors.Is(err, syscall.ELOOP) }
