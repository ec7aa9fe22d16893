package memlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSystem sets the RAM, the RLIMIT_AS (0: none) and a cgroup root
// holding files (path relative to the root → content) for one test.
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
	oldRoot, oldAS, oldRAM := cgroupRoot, addressLimit, totalRAM
	t.Cleanup(func() { cgroupRoot, addressLimit, totalRAM = oldRoot, oldAS, oldRAM })
	cgroupRoot = root
	addressLimit = func() (float64, bool) { return rlimit, rlimit > 0 }
	totalRAM = func() (float64, bool) { return ram, true }
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
		{"ulimit -v", 2 << 30, nil, 2 << 30},
		{"cgroup v2", 0, map[string]string{"memory.max": "3221225472\n"}, 3 << 30},
		{"cgroup v2 max", 0, map[string]string{"memory.max": "max\n"}, ram},
		{"cgroup v1 (Slurm)", 0, map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"cgroup v1 unlimited", 0, map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, ram},
		{"lowest wins", 4 << 30, map[string]string{"memory.max": "3221225472", "memory/memory.limit_in_bytes": "5368709120"}, 3 << 30},
	} {
		fakeSystem(t, ram, c.rlimit, c.files)
		if got, _, ok := systemMemory(); !ok || got != c.want {
			t.Errorf("%s: systemMemory() = %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
}

func TestCheckHonoursRlimit(t *testing.T) {
	t.Setenv(Env, "")
	fakeSystem(t, 64<<30, 1<<30, nil)
	if err := Check("a 2 GiB matrix", 2<<30); err == nil || !strings.Contains(err.Error(), "ulimit -v") {
		t.Errorf("2 GiB under ulimit -v of 1 GiB: %v", err)
	}
}
