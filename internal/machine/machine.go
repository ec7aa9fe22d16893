// Package machine describes the machine a computation runs on, in one
// line that results carry beside their wall time: a time means little
// without the CPU, the cores and the BLAS that produced it.
package machine

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// CPU returns the CPU's model name ("model name" in /proc/cpuinfo), or
// "CPU model not reported" where that is not available (other systems,
// most arm64 kernels).
func CPU() string { return cpu() }

var cpu = sync.OnceValue(func() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if name := modelName(string(b)); name != "" {
			return name
		}
	}
	return "CPU model not reported"
})

// modelName returns the first "model name" field of a /proc/cpuinfo text,
// spaces collapsed, or "" when there is none.
func modelName(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return ""
}

// BLAS names the BLAS that gonum's calls go to in this program at the
// time of the call (see dgemm.Describe).
func BLAS() string { return dgemm.Describe() }

// Describe is this process's machine in one line: the CPU, the logical
// CPUs (and GOMAXPROCS where it differs), the platform and the BLAS, e.g.
// "Intel(R) Xeon(R) Processor @ 2.50GHz, 2 CPUs, linux/amd64, BLAS wcmc
// dgemm, AVX-512 (12×16)".
func Describe() string {
	return describe(CPU(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS+"/"+runtime.GOARCH, BLAS())
}

func describe(cpu string, cpus, procs int, platform, blas string) string {
	n := fmt.Sprintf("%d CPUs", cpus)
	if cpus == 1 {
		n = "1 CPU"
	}
	if procs != cpus {
		n += fmt.Sprintf(" (GOMAXPROCS %d)", procs)
	}
	return fmt.Sprintf("%s, %s, %s, BLAS %s", cpu, n, platform, blas)
}

// Arithmetic returns what a Describe line shows of the rounding of the
// program's arithmetic, hence of its results' last bits: package dgemm's
// product whatever its kernel ("wcmc dgemm": its kernels give the same
// bits, and it runs only on amd64 CPUs with AVX2 and FMA), or another BLAS
// with the platform, whose compiler and assembly decide how the Go code
// rounds (the Go compiler fuses multiply-adds on arm64, not on amd64):
// "gonum, linux/arm64", "OpenBLAS 0.3.21 (cgo), Haswell kernels, 1 thread,
// linux/amd64". It is "" for a line that names no BLAS. Two lines with the
// same Arithmetic can still round differently where the line does not
// show it (math.Exp uses FMA on amd64 CPUs that have it, which gonum's
// BLAS does not require).
func Arithmetic(line string) string {
	host, blas, ok := strings.Cut(line, ", BLAS ")
	if !ok {
		return ""
	}
	if strings.HasPrefix(blas, dgemm.Name+", ") {
		return dgemm.Name
	}
	if i := strings.LastIndex(host, ", "); i >= 0 {
		blas += ", " + host[i+2:]
	}
	return blas
}
