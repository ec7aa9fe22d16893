//go:build !purego

package dgemm

import "golang.org/x/sys/cpu"

// tile12x16AVX512 and tile6x8AVX2 are the assembly kernels
// (kernel_amd64.s): 24 and 12 vector accumulators, one fused multiply-add
// chain per entry of the tile.
//
//go:noescape
func tile12x16AVX512(kb int, a, b, c *float64, ldc int, accumulate bool)

//go:noescape
func tile6x8AVX2(kb int, a, b, c *float64, ldc int, accumulate bool)

var avx512Kernel = kernel{name: "AVX-512 (12×16)", mr: 12, nr: 16, vector: true}
var avx2Kernel = kernel{name: "AVX2 (6×8)", mr: 6, nr: 8, vector: true}

func init() {
	avx512Kernel.run = func(kb int, a, b, c []float64, ldc int, accumulate bool) {
		checkTile(avx512Kernel, kb, a, b, c, ldc)
		tile12x16AVX512(kb, &a[0], &b[0], &c[0], ldc, accumulate)
	}
	avx2Kernel.run = func(kb int, a, b, c []float64, ldc int, accumulate bool) {
		checkTile(avx2Kernel, kb, a, b, c, ldc)
		tile6x8AVX2(kb, &a[0], &b[0], &c[0], ldc, accumulate)
	}
}

// checkTile panics unless the slices hold what a kernel reads and writes;
// the assembly kernels trust their arguments.
func checkTile(k kernel, kb int, a, b, c []float64, ldc int) {
	if kb < 1 || len(a) < kb*k.mr || len(b) < kb*k.nr || ldc < k.nr || len(c) < (k.mr-1)*ldc+k.nr {
		panic("dgemm: kernel called with slices too short for its tile")
	}
}

var (
	hasAVX512 = cpu.X86.HasAVX512F
	hasAVX2   = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// kernels lists the kernels this machine runs, fastest first (the
// portable one where math.FMA is an instruction, for the tests).
func kernels() []kernel {
	var ks []kernel
	if hasAVX512 {
		ks = append(ks, avx512Kernel)
	}
	if hasAVX2 {
		ks = append(ks, avx2Kernel)
	}
	if cpu.X86.HasFMA {
		ks = append(ks, goKernel)
	}
	return ks
}
