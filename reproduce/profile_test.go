package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/internal/stageprof"
	"github.com/wcmc-project/wcmc/runner"
)

// TestRunProfile checks --profile: each experiment computed gets its CPU
// and allocation profiles, which parse, and a section in PROFILE.md with
// its stages; a rerun that reuses every result shows the earlier profile,
// and one into a fresh directory says that nothing was profiled. (No
// assertion on the times, which depend on the machine.)
func TestRunProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "prof")
	cfg := quick(filepath.Join(dir, "out"), "gauss-snr")
	cfg.Profile = prof
	if _, log, err := run(t, cfg); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	f, err := os.Open(filepath.Join(prof, "gauss-snr.cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stageprof.Read(f)
	f.Close()
	if err != nil {
		t.Fatalf("the CPU profile: %v", err)
	}
	if _, err := os.Stat(filepath.Join(prof, "gauss-snr.allocs.pprof")); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(prof, "PROFILE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Where the time went", "| `gauss-snr` |", "### `gauss-snr`", "| stage | CPU | share |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("PROFILE.md lacks %q:\n%s", want, md)
		}
	}

	if _, log, err := run(t, cfg); err != nil {
		t.Fatalf("rerun: %v\n%s", err, log)
	}
	md, _ = os.ReadFile(filepath.Join(prof, "PROFILE.md"))
	if !strings.Contains(string(md), "| `gauss-snr` (earlier, "+runner.Version+") |") {
		t.Errorf("PROFILE.md after a rerun that reused everything:\n%s", md)
	}
	cfg.Profile = filepath.Join(dir, "prof2")
	if _, log, err := run(t, cfg); err != nil {
		t.Fatalf("rerun: %v\n%s", err, log)
	}
	md, _ = os.ReadFile(filepath.Join(cfg.Profile, "PROFILE.md"))
	if !strings.Contains(string(md), "No experiment was profiled") || strings.Contains(string(md), "### `gauss-snr`") {
		t.Errorf("PROFILE.md of a rerun into a fresh directory:\n%s", md)
	}
}
