package atomicfile

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// KillEnv names the environment variable of the fault-injection hook
// KillPoint. It is for tests only (cmd/wcmc/fault_schedule_test.go); unset,
// as it always is outside them, KillPoint does nothing.
const KillEnv = "WCMC_TEST_KILL_AT"

// The events at which KillPoint is called, and so at which a test can kill
// a process: mid-append of a journal line (half of it written), right
// after a journal line is synced (a task boundary), a file complete under
// its temporary name but not yet renamed into place, and right after a
// file is renamed into place (between two files).
const (
	KillJournalAppend = "journal-append"
	KillTaskSaved     = "task-saved"
	KillFileRename    = "file-rename"
	KillFileDone      = "file-done"
)

// killTarget is the event and count parsed from KillEnv; n = 0 is inert.
var killTarget = sync.OnceValues(func() (string, int64) {
	v := os.Getenv(KillEnv)
	if v == "" {
		return "", 0
	}
	event, count, _ := strings.Cut(v, ":")
	n, err := strconv.ParseInt(count, 10, 64)
	switch event {
	case KillJournalAppend, KillTaskSaved, KillFileRename, KillFileDone:
	default:
		err = fmt.Errorf("unknown event %q", event)
	}
	if err == nil && n < 1 {
		err = fmt.Errorf("count %d < 1", n)
	}
	if err != nil {
		// A test that sets the hook wrongly must not pass unkilled.
		fmt.Fprintf(os.Stderr, "%s=%q: want EVENT:N (N ≥ 1, EVENT one of %s, %s, %s, %s): %v\n",
			KillEnv, v, KillJournalAppend, KillTaskSaved, KillFileRename, KillFileDone, err)
		os.Exit(2)
	}
	return event, n
})

// killSeen counts the calls for the targeted event.
var killSeen atomic.Int64

// KillPoint is a test-only fault-injection hook, inert unless KillEnv is
// set to "EVENT:N": at the N-th call for EVENT in this process it writes
// the first half of partial to w (when w is not nil: a torn write) and
// kills the process with SIGKILL, so that a test can stop a process at an
// exact point of its writes, chosen by count rather than by timing.
func KillPoint(event string, w io.Writer, partial []byte) {
	target, n := killTarget()
	if n == 0 || event != target || killSeen.Add(1) != n {
		return
	}
	if w != nil {
		w.Write(partial[:len(partial)/2])
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill() // SIGKILL on Unix
	}
	for {
		time.Sleep(time.Hour) // until the signal lands
	}
}
