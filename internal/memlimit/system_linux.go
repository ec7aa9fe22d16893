package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// systemMemory returns the physical memory, or the cgroup's memory.max
// when it is lower (a container's limit).
func systemMemory() (float64, bool) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil || info.Totalram == 0 {
		return 0, false
	}
	total := float64(info.Totalram) * float64(info.Unit)
	if data, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil && v > 0 && v < total {
			total = v
		}
	}
	return total, true
}
