package memlimit

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// runtimeAddressSpace is the address space a wcmc process holds before it
// allocates its data, assumed where the process's own figure cannot be
// read: the VmSize of `wcmc posterior` on a 400-row CSV, read from
// /proc/PID/status 0.3 s after its start, was 1,276,356 KiB (Go 1.26,
// linux/amd64, CGO_ENABLED=0; a trivial Go program: 1,227,180 KiB). Most
// of it is reserved, not used: the runtime's page-allocator summaries
// (585 MiB) and scavenge index (512 MiB), which /proc/PID/maps shows as
// PROT_NONE mappings.
const runtimeAddressSpace = 1280 << 20

// heapArena is the unit in which the Go heap reserves address space
// (the runtime's heapArenaBytes on 64-bit Linux): the heap may hold up to
// one arena more than it uses.
const heapArena = 64 << 20

// cgoThreadAddressSpace is the address space each OS thread of a build
// with cgo reserves: glibc's malloc arena of the thread (64 MiB reserved;
// /proc/PID/maps of a cgo build of `wcmc posterior` with 7 threads showed
// seven PROT_NONE mappings of 63.9 MiB, the pure-Go build none) and its
// pthread stack (8 MiB, the usual ulimit -s).
const cgoThreadAddressSpace = 72 << 20

// spareThreads is how many OS threads the Go runtime runs beyond
// GOMAXPROCS at most in a wcmc command: the system monitor, the template
// thread and threads blocked in file writes (8 threads measured at
// GOMAXPROCS = 2).
const spareThreads = 6

// AddressSpace returns the address space the process needs beside the
// memory its computation allocates, and how it was found: what it holds
// now (VmSize: the Go runtime's reservations, the binary, the heap so
// far, the threads; runtimeAddressSpace where unknown), one heap arena,
// and, in a build with cgo, cgoThreadAddressSpace per thread it may still
// start.
func AddressSpace() (bytes float64, how string) {
	held, threads, ok := addressInUse()
	how = "this process holds (VmSize, mostly the Go runtime's reservations) and a heap arena"
	if !ok {
		held, threads = runtimeAddressSpace, 0
		how = "the Go runtime reserves (" + Format(runtimeAddressSpace) + " measured) and a heap arena"
	}
	bytes = held + heapArena
	if more := runtime.GOMAXPROCS(0) + spareThreads - threads; cgoBuild && more > 0 {
		bytes += float64(more) * cgoThreadAddressSpace
		how += fmt.Sprintf(" and that %d more threads of this cgo build reserve", more)
	}
	return bytes, how
}

// SetGCLimit gives the garbage collector a soft memory limit
// (debug.SetMemoryLimit) under an address-space cap (ulimit -v), unless
// GOMEMLIMIT sets one: the cap less what the process holds beside the
// memory the Go runtime has mapped, so that the collector works harder
// rather than let the heap reserve address space the process does not
// have. It returns the limit set, or 0.
func SetGCLimit() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	asCap, ok := addressLimit()
	if !ok {
		return 0
	}
	overhead, _ := AddressSpace()
	limit := int64(asCap - overhead + goMapped())
	if limit <= 0 {
		return 0
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// goMapped returns the memory the Go runtime has mapped and not released,
// which is what its memory limit bounds.
func goMapped() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64()) - float64(s[1].Value.Uint64())
}
