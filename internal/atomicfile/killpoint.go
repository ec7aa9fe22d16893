package atomicfile

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// killTarget is the event, count and signal parsed from KillEnv; n = 0 is
// inert, term is whether the signal is SIGTERM rather than SIGKILL.
type killTarget struct {
	event string
	n     int64
	term  bool
}

// target parses KillEnv once.
var target = sync.OnceValue(func() killTarget {
	v := os.Getenv(KillEnv)
	if v == "" {
		return killTarget{}
	}
	event, count, _ := strings.Cut(v, ":")
	count, sig, _ := strings.Cut(count, ":")
	n, err := strconv.ParseInt(count, 10, 64)
	switch event {
	case KillJournalAppend, KillTaskSaved, KillFileRename, KillFileDone:
	default:
		err = fmt.Errorf("unknown event %q", event)
	}
	if err == nil && n < 1 {
		err = fmt.Errorf("count %d < 1", n)
	}
	if err == nil && sig != "" && sig != "TERM" {
		err = fmt.Errorf("unknown signal %q", sig)
	}
	if err != nil {
		// A test that sets the hook wrongly must not pass unkilled.
		fmt.Fprintf(os.Stderr, "%s=%q: want EVENT:N or EVENT:N:TERM (N ≥ 1, EVENT one of %s, %s, %s, %s): %v\n",
			KillEnv, v, KillJournalAppend, KillTaskSaved, KillFileRename, KillFileDone, err)
		os.Exit(2)
	}
	return killTarget{event, n, sig == "TERM"}
})

// killSeen counts the calls for the targeted event.
var killSeen atomic.Int64

// KillPoint is a test-only fault-injection hook, inert unless KillEnv is
// set to "EVENT:N": at the N-th call for EVENT in this process it writes
// the first half of partial to w (when w is not nil: a torn write) and
// kills the process with SIGKILL, so that a test can stop a process at an
// exact point of its writes, chosen by count rather than by timing. With
// "EVENT:N:TERM" it sends the process SIGTERM instead and returns.
func KillPoint(event string, w io.Writer, partial []byte) {
	k := target()
	if k.n == 0 || event != k.event || killSeen.Add(1) != k.n {
		return
	}
	if k.term {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Signal(syscall.SIGTERM)
		}
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
