//go:build purego || !amd64

package dgemm

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// kernels lists the kernels this machine runs: the portable one where
// math.FMA compiles to a fused multiply-add instruction, for the tests
// (Dgemm leaves every product to gonum here).
func kernels() []kernel {
	switch runtime.GOARCH {
	case "amd64":
		if !cpu.X86.HasFMA {
			return nil
		}
	case "arm64", "ppc64", "ppc64le", "s390x", "riscv64", "loong64":
	default:
		return nil
	}
	return []kernel{goKernel}
}
