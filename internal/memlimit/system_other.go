//go:build !linux

package memlimit

// systemMemory is unknown on this platform: the fallback applies.
func systemMemory() (float64, string, bool) { return 0, "", false }
