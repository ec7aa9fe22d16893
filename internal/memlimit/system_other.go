//go:build !linux

package memlimit

// systemMemory is unknown on this platform: the fallback applies.
func systemMemory() (float64, string, bool) { return 0, "", false }

// addressLimit is not read on this platform: no address-space check.
var addressLimit = func() (float64, bool) { return 0, false }

// addressInUse is unknown on this platform.
var addressInUse = func() (float64, int, bool) { return 0, 0, false }
