package main

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestExitStatus: a command that fails after a signal exits 128+N, one that
// fails otherwise exits with its code, and one that finished anyway exits 0.
func TestExitStatus(t *testing.T) {
	stopped := func(sig syscall.Signal) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(stoppedBy{sig})
		return ctx
	}
	for _, c := range []struct {
		ctx        context.Context
		code, want int
	}{
		{stopped(syscall.SIGTERM), 1, 143},
		{stopped(syscall.SIGINT), 1, 130},
		{stopped(syscall.SIGTERM), 0, 0},
		{context.Background(), 1, 1},
		{context.Background(), 0, 0},
	} {
		if got := exitStatus(c.ctx, c.code); got != c.want {
			t.Errorf("exitStatus(%v, %d) = %d, want %d", context.Cause(c.ctx), c.code, got, c.want)
		}
	}
	if !errors.Is(stoppedBy{syscall.SIGTERM}, context.Canceled) {
		t.Error("a signal's cause is not context.Canceled")
	}
}

// TestSignalExitCodes runs the binary and stops a run with SIGTERM and
// with SIGINT once it has journaled tasks: it exits 143 and 130, so that a
// Kubernetes podFailurePolicy (deploy/k8s-indexed-job.yaml) tells a stop
// from an error (exit 1).
func TestSignalExitCodes(t *testing.T) {
	bin := faultBuild(t)
	for _, c := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		out := filepath.Join(t.TempDir(), "run")
		// 600 tasks: far more than are done when the signal arrives.
		args := []string{"run", "gauss-snr", "--quick", "--trials", "200", "--seed", "3", "--out", out, "--workers", "1"}
		p := startWCMC(t, bin, nil, args...)
		faultWaitRecords(t, p, filepath.Join(out, "gauss-snr.journal.jsonl"), 2)
		p.cmd.Process.Signal(c.sig)
		if code := p.wait(t); code != c.want {
			t.Errorf("%v: exit %d, want %d\n%s", c.sig, code, c.want, p.stderr.String())
		}
	}
	// A second signal stops at once (watchSignals' os.Exit), with the
	// status of the first.
	out := filepath.Join(t.TempDir(), "run")
	p := startWCMC(t, bin, nil, "run", "gauss-snr", "--quick", "--trials", "200", "--seed", "3", "--out", out, "--workers", "1")
	faultWaitRecords(t, p, filepath.Join(out, "gauss-snr.journal.jsonl"), 2)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 143 {
		t.Errorf("two SIGTERMs: exit %d, want 143\n%s", code, p.stderr.String())
	}
	bad := startWCMC(t, bin, nil, "run", "gauss-snr", "--trials", "-1", "--out", t.TempDir())
	if code := bad.wait(t); code != 1 {
		t.Errorf("a bad argument: exit %d, want 1\n%s", code, bad.stderr.String())
	}
}
