//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

import "os"

// terminalWidth reports no terminal: progress is printed as plain lines.
func terminalWidth(*os.File) (int, bool) { return 0, false }
