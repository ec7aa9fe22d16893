package memlimit

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// cgroupRoot is where the cgroup file systems are mounted (a variable
// for the tests).
var cgroupRoot = "/sys/fs/cgroup"

// addressLimit returns the soft RLIMIT_AS (ulimit -v), or false when
// there is none (a variable for the tests).
var addressLimit = func() (float64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	return float64(r.Cur), true
}

// addressInUse returns the process's address space (VmSize) and its
// number of threads, from /proc/self/status (a variable for the tests).
var addressInUse = func() (bytes float64, threads int, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	var size, thr bool
	for sc := bufio.NewScanner(f); sc.Scan(); {
		k, v, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseFloat(fields[0], 64)
		switch {
		case err != nil:
		case k == "VmSize" && len(fields) == 2 && fields[1] == "kB":
			bytes, size = n*1024, true
		case k == "Threads":
			threads, thr = int(n), true
		}
	}
	return bytes, threads, size && thr
}

// totalRAM returns the physical memory (a variable for the tests).
var totalRAM = func() (float64, bool) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil || info.Totalram == 0 {
		return 0, false
	}
	return float64(info.Totalram) * float64(info.Unit), true
}

// systemMemory returns the physical memory or, when lower, the limit of
// the process's cgroup (v2 memory.max, v1 memory/memory.limit_in_bytes,
// as on Slurm nodes), and which of them it is.
func systemMemory() (float64, string, bool) {
	total, ok := totalRAM()
	if !ok {
		return 0, "", false
	}
	source := "the memory of this machine"
	for _, f := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		p := filepath.Join(cgroupRoot, f)
		if data, err := os.ReadFile(p); err == nil {
			// "max" (v2) fails to parse: no limit.
			if v, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil && v > 0 && v < total {
				total, source = v, "the container's limit, "+p
			}
		}
	}
	return total, source, true
}
