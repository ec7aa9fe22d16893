package memlimit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
)

// fakeSystem sets the RAM, the RLIMIT_AS (0: none) and a cgroup root
// holding files (path relative to the root → content) for one test; the
// process holds 1 GiB of address space in 1000 threads (so that a cgo
// build reserves nothing for more threads).
func fakeSystem(t *testing.T, ram, rlimit float64, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldRoot, oldAS, oldRAM, oldUse := cgroupRoot, addressLimit, totalRAM, addressInUse
	t.Cleanup(func() { cgroupRoot, addressLimit, totalRAM, addressInUse = oldRoot, oldAS, oldRAM, oldUse })
	cgroupRoot = root
	addressLimit = func() (float64, bool) { return rlimit, rlimit > 0 }
	totalRAM = func() (float64, bool) { return ram, true }
	addressInUse = func() (float64, int, bool) { return 1 << 30, 1000, true }
}

func TestSystemMemoryLimits(t *testing.T) {
	const ram = 64 << 30
	for _, c := range []struct {
		name   string
		rlimit float64
		files  map[string]string
		want   float64
	}{
		{"RAM only", 0, nil, ram},
		{"ulimit -v is no limit on memory", 2 << 30, nil, ram},
		{"cgroup v2", 0, map[string]string{"memory.max": "3221225472\n"}, 3 << 30},
		{"cgroup v2 max", 0, map[string]string{"memory.max": "max\n"}, ram},
		{"cgroup v1 (Slurm)", 0, map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"cgroup v1 unlimited", 0, map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, ram},
		{"lowest wins", 0, map[string]string{"memory.max": "3221225472", "memory/memory.limit_in_bytes": "5368709120"}, 3 << 30},
		{"cgroup v1 lowest", 0, map[string]string{"memory.max": "5368709120", "memory/memory.limit_in_bytes": "3221225472"}, 3 << 30},
	} {
		fakeSystem(t, ram, c.rlimit, c.files)
		if got, _, ok := systemMemory(); !ok || got != c.want {
			t.Errorf("%s: systemMemory() = %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
}

// TestCheckAddressSpace: under ulimit -v, a need that fits in memory but
// not in the address space left beside what the process holds is refused,
// naming the cap and the ulimit -v it would take.
func TestCheckAddressSpace(t *testing.T) {
	t.Setenv(Env, "")
	fakeSystem(t, 64<<30, 2<<30, nil) // holds 1 GiB: 1 GiB + 64 MiB (an arena) beside the need
	if err := Check("a 512 MiB matrix", 512<<20); err != nil {
		t.Errorf("512 MiB beside 1.06 GiB under 2 GiB: %v", err)
	}
	err := Check("a 1 GiB matrix", 1<<30)
	// 2 GiB + 64 MiB = 2162688 KiB, and 1 byte more: 2228224.
	for _, w := range []string{"a 1 GiB matrix needs about 1 GiB of memory", "1.06 GiB of address space", "VmSize", "2.06 GiB, more than the 2 GiB that ulimit -v allows (RLIMIT_AS)", "(ulimit -v 2162688)", Env} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("1 GiB beside 1.06 GiB under 2 GiB: error %v should mention %q", err, w)
		}
	}
	if err := Check("a matrix", 1<<30+1); err == nil || !strings.Contains(err.Error(), "(ulimit -v 2228224)") {
		t.Errorf("1 GiB + 1 byte: the ulimit -v suggested is not rounded up to 64 MiB: %v", err)
	}
	// Where the process's address space is unknown, the measured one stands in.
	addressInUse = func() (float64, int, bool) { return 0, 0, false }
	if got, how := AddressSpace(); got < runtimeAddressSpace+heapArena || !strings.Contains(how, Format(runtimeAddressSpace)) {
		t.Errorf("AddressSpace() = %s, %q; want at least %s", Format(got), how, Format(runtimeAddressSpace+heapArena))
	}
	// WCMC_MAX_MEMORY replaces every limit.
	t.Setenv(Env, "8G")
	if err := Check("a 4 GiB matrix", 4<<30); err != nil {
		t.Errorf("4 GiB under %s=8G and ulimit -v 2 GiB: %v", Env, err)
	}
}

// TestCgoThreads: a cgo build counts the malloc arena and stack of each
// thread it may still start; a pure-Go build none.
func TestCgoThreads(t *testing.T) {
	fakeSystem(t, 64<<30, 0, nil)
	addressInUse = func() (float64, int, bool) { return 1 << 30, 1, true }
	got, how := AddressSpace()
	more := runtime.GOMAXPROCS(0) + spareThreads - 1
	want := float64(1<<30 + heapArena)
	if cgoBuild {
		want += float64(more) * cgoThreadAddressSpace
	}
	if got != want || cgoBuild != strings.Contains(how, fmt.Sprintf("%d more threads", more)) {
		t.Errorf("cgo %v, %d threads to come: AddressSpace() = %s, %q; want %s", cgoBuild, more, Format(got), how, Format(want))
	}
}

// TestSetGCLimit: under ulimit -v the collector's limit is the address
// space left plus what the runtime has mapped; GOMEMLIMIT, or no cap,
// leaves it alone.
func TestSetGCLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	fakeSystem(t, 64<<30, 0, nil)
	if got := SetGCLimit(); got != 0 {
		t.Errorf("no cap: limit %d set", got)
	}
	fakeSystem(t, 64<<30, 3<<30, nil)
	got := SetGCLimit()
	overhead, _ := AddressSpace()
	total := []metrics.Sample{{Name: "/memory/classes/total:bytes"}} // never less than what was mapped
	metrics.Read(total)
	mapped := float64(total[0].Value.Uint64())
	if left := 3<<30 - overhead; float64(got) <= left || float64(got) > left+mapped || debug.SetMemoryLimit(-1) != got {
		t.Errorf("cap 3 GiB beside %s: limit %s, want the %s left plus at most the %s mapped", Format(overhead), Format(float64(got)), Format(left), Format(mapped))
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := SetGCLimit(); got != 0 {
		t.Errorf("GOMEMLIMIT set: limit %d set", got)
	}
}
