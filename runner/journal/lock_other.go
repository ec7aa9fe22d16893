//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import "os"

// lockFile is a no-op where flock(2) is not available.
func lockFile(*os.File) error { return nil }

// noFollow is 0 where O_NOFOLLOW is not available; open checks for links
// before opening.
const noFollow = 0
