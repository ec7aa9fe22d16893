//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// faultScheduleSeed seeds the kill schedule of TestFaultSchedule;
// WCMC_FAULT_SEED replaces it to try another schedule.
const faultScheduleSeed = 20261123

// TestFaultSchedule kills a small gauss-snr sweep (quick settings, 8
// trials: 24 tasks) with SIGKILL at points drawn from a seeded generator,
// resuming it after each kill, and checks that the resumed run ends with
// the files of an uninterrupted run. The kills land at exact points of the
// run's writes, counted by the binary's test-only hook (atomicfile.KillEnv),
// never timed:
//
//  1. at the run's first write, ID.run.json (before any task): complete
//     under its temporary name, or just renamed into place;
//  2. six times while tasks remain: three halfway through appending a
//     journal line (a torn last line) and three right after a line is
//     synced (a task boundary), in a seeded order, each after a seeded
//     number of tasks;
//  3. four times while the final files are written (after the last task):
//     twice with the n-th file complete under its temporary name, twice
//     right after it is renamed, n seeded among the run's files.
//
// After each kill the journal must hold exactly the tasks saved before it
// (plus a torn line after a mid-append kill) and the directory at most the
// one temporary file of the write cut short. The final files must equal the
// uninterrupted run's byte for byte: ID.csv, ID.summary.csv and the PNG
// and SVG figures as they are; ID.json with its "start", "end",
// "wall_seconds" and "sessions" (when, how long and by which processes the
// run ran) left out; the PDF figures
// as they are (both runs fix their dates with SOURCE_DATE_EPOCH, see
// faultEnv). No journal, identity or temporary file may remain.
func TestFaultSchedule(t *testing.T) {
	bin := faultBuild(t)
	seed := uint64(faultScheduleSeed)
	if s := os.Getenv("WCMC_FAULT_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("WCMC_FAULT_SEED=%q: %v", s, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6661756c74)) // "fault"
	var schedule []string
	t.Cleanup(func() { // printed on failure, and with -v
		t.Logf("kill schedule from seed %d (rerun with WCMC_FAULT_SEED=%d): %s", seed, seed, strings.Join(schedule, ", "))
	})

	root := t.TempDir()
	args := func(out string) []string {
		return []string{"run", "gauss-snr", "--quick", "--trials", "8", "--seed", "5", "--out", out, "--workers", "2"}
	}
	ref := filepath.Join(root, "ref")
	faultMustSucceed(t, startWCMC(t, bin, nil, args(ref)...))
	const total = 24 // 3 SNRs × 8 trials
	if n, want := faultLines(filepath.Join(ref, "gauss-snr.csv")), 1+total*gaussSNRRows(t); n != want {
		t.Fatalf("reference CSV has %d lines, want %d", n, want)
	}
	finals := faultDirNames(t, ref)

	out := filepath.Join(root, "killed")
	journal := filepath.Join(out, "gauss-snr.journal.jsonl")
	kill := func(event string, n int) {
		t.Helper()
		before, _ := faultJournal(journal)
		schedule = append(schedule, fmt.Sprintf("%s:%d (after %d tasks)", event, n, before))
		a := args(out)
		if len(schedule) > 1 {
			a = append(a, "--resume")
		}
		p := startWCMC(t, bin, []string{atomicfile.KillEnv + "=" + event + ":" + strconv.Itoa(n)}, a...)
		p.wait(t)
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %s: wcmc was not killed at its %s:%d point (%v)\n%s", schedule[len(schedule)-1], event, n, p.cmd.ProcessState, p.stderr.String())
		}
		records, torn := faultJournal(journal)
		want, wantTorn := before, false
		switch event {
		case atomicfile.KillJournalAppend:
			want, wantTorn = before+n-1, true
		case atomicfile.KillTaskSaved:
			want = before + n
		default:
			if before > 0 {
				want = total // the final files come after the last task
			}
		}
		if records != want || torn != wantTorn {
			t.Fatalf("kill %s: the journal holds %d tasks (torn last line: %v), want %d (%v)", schedule[len(schedule)-1], records, torn, want, wantTorn)
		}
		temps := 0
		for _, name := range faultDirNames(t, out) {
			if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
				temps++
			}
		}
		wantTemps := 0
		if event == atomicfile.KillFileRename {
			wantTemps = 1
		}
		// The final files are all written under temporary names before any
		// is renamed into place: a kill between the renames leaves those
		// not yet renamed and the backups of those replaced, which the next
		// run puts in place and removes.
		finalWrite := before > 0 && (event == atomicfile.KillFileRename || event == atomicfile.KillFileDone)
		if finalWrite && temps <= 2*len(finals) {
			wantTemps = temps
		}
		if temps != wantTemps {
			t.Fatalf("kill %s: %d temporary files in %s, want %d: %v", schedule[len(schedule)-1], temps, out, wantTemps, faultDirNames(t, out))
		}
	}

	// 1. The identity, the run's first write.
	kill([]string{atomicfile.KillFileRename, atomicfile.KillFileDone}[rng.IntN(2)], 1)

	// 2. Mid-append and task boundaries; each kill leaves tasks for the next.
	journalKills := []string{
		atomicfile.KillJournalAppend, atomicfile.KillJournalAppend, atomicfile.KillJournalAppend,
		atomicfile.KillTaskSaved, atomicfile.KillTaskSaved, atomicfile.KillTaskSaved,
	}
	rng.Shuffle(len(journalKills), func(i, j int) { journalKills[i], journalKills[j] = journalKills[j], journalKills[i] })
	for i, event := range journalKills {
		saved, _ := faultJournal(journal)
		left := len(journalKills) - i // this kill and those after it
		kill(event, 1+rng.IntN((total-saved)/(left+1)))
	}

	// 3. Mid-write of the final files: the first of these kills runs the
	// remaining tasks, then dies writing.
	fileKills := []string{atomicfile.KillFileRename, atomicfile.KillFileRename, atomicfile.KillFileDone, atomicfile.KillFileDone}
	rng.Shuffle(len(fileKills), func(i, j int) { fileKills[i], fileKills[j] = fileKills[j], fileKills[i] })
	for _, event := range fileKills {
		kill(event, 1+rng.IntN(len(finals)))
	}

	p := startWCMC(t, bin, nil, append(args(out), "--resume")...)
	faultMustSucceed(t, p)
	if got := faultDirNames(t, out); !slices.Equal(got, finals) {
		t.Errorf("files after the last resume: %v, want those of the uninterrupted run: %v", got, finals)
	}
	for _, name := range finals {
		a, err1 := os.ReadFile(filepath.Join(out, name))
		b, err2 := os.ReadFile(filepath.Join(ref, name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		if !bytes.Equal(faultMaskTimes(name, a), faultMaskTimes(name, b)) {
			t.Errorf("%s differs from the uninterrupted run's", name)
		}
	}
}

// faultJournal counts the complete lines of a journal and says whether a
// torn line follows them.
func faultJournal(path string) (records int, torn bool) {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n")), len(data) > 0 && data[len(data)-1] != '\n'
}

// faultDirNames lists the names in dir, sorted.
func faultDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var (
	faultJSONTimes    = regexp.MustCompile(`(?m)^  "(start|end|wall_seconds)": .*$`)
	faultJSONSessions = regexp.MustCompile(`(?ms)^  "sessions": \[$.*?^  \](,?)$`)
)

// faultMaskTimes blanks what a results file records of when and by which
// processes it was computed: ID.json's start, end, wall time and sessions
// (the killed run has one a resume).
func faultMaskTimes(name string, data []byte) []byte {
	if filepath.Ext(name) == ".json" {
		data = faultJSONSessions.ReplaceAll(data, []byte(`  "sessions": (sessions)$1`))
		return faultJSONTimes.ReplaceAll(data, []byte(`  "$1": (time)`))
	}
	return data
}
