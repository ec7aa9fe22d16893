//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without waiting, so that
// two processes never append to one journal. The lock goes with the
// process: a killed run leaves no stale lock.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
