package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/internal/stageprof"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/journal"
	"github.com/wcmc-project/wcmc/runner/results"
)

// runOne returns the result of a planned experiment: the stored one
// in out if it matches the plan (reused), otherwise a fresh run (with opts,
// from which the plan was made) written to out, profiled by prof if not
// nil.
func runOne(ctx context.Context, plan *runner.Plan, opts runner.Options, fig figureOptions, out, tag string, accept []string, prof *stageprof.Recorder, log io.Writer) (res *runner.Result, reused bool, err error) {
	spec := plan.Spec
	res, err = results.LoadMatching(out, plan, accept...)
	switch {
	case err == nil && fig.redraw:
		fmt.Fprintf(log, "%s: reusing the results in %s; redrawing the figures\n", tag, out)
		if err := writeResult(out, res, fig.Options, log); err != nil {
			return nil, false, err
		}
		return res, true, nil
	case err == nil:
		if figuresPresent(out, res) {
			fmt.Fprintf(log, "%s: reusing the results in %s (same parameters, seed, trials and version)\n", tag, out)
			return res, true, nil
		}
		fmt.Fprintf(log, "%s: reusing the results in %s; redrawing the missing figures\n", tag, out)
		if err := writeResult(out, res, fig.Options, log); err != nil {
			return nil, false, err
		}
		return res, true, nil
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(log, "%s: running (%d tasks)\n", tag, len(plan.Tasks))
	case errors.Is(err, results.ErrMismatch):
		fmt.Fprintf(log, "%s: stored results differ (%v); running again\n", tag, err)
	default:
		fmt.Fprintf(log, "%s: cannot reuse the stored results (%v); running again\n", tag, err)
	}
	if err := discardOtherJournal(plan, out, tag, log); err != nil {
		return nil, false, err
	}
	// Journal the run in out, and continue one that was interrupted: an
	// interrupted reproduce picks up where it stopped. Resume only when
	// there is a journal: on a fresh directory there is nothing to say.
	resume := fileExists(journal.IdentityPath(out, spec.ID))
	compute := func() (err error) {
		res, err = journal.Run(ctx, spec, journal.Options{Options: opts, Dir: out, Resume: resume})
		return err
	}
	if prof != nil {
		err = prof.Profile(spec.ID, resume, compute)
	} else {
		err = compute()
	}
	if err != nil {
		return nil, false, err
	}
	if err := writeResult(out, res, fig.Options, log); err != nil {
		return nil, false, err
	}
	// As wcmc run does: once the results are written, the journal is
	// redundant (the stored results are what a rerun reuses).
	if err := journal.Remove(out, spec.ID); err != nil {
		fmt.Fprintf(log, "%s: the results are written, but the journal could not be removed: %v\n", tag, err)
	}
	fmt.Fprintf(log, "%s: done in %s\n", tag, res.Wall.Round(100*time.Millisecond))
	return res, false, nil
}

// figureOptions are how a reproduction draws its figures: opts, and
// whether to redraw those of reused results.
type figureOptions struct {
	results.Options
	redraw bool
}

// discardOtherJournal removes the journal in out of a run with other settings
// than plan (an interrupted --quick run before a full one, say), which a
// resume would refuse; reproduce reruns such results anyway.
func discardOtherJournal(plan *runner.Plan, out, tag string, log io.Writer) error {
	ipath := journal.IdentityPath(out, plan.Spec.ID)
	id, err := journal.ReadIdentity(ipath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && len(id.Mismatch(plan)) == 0 {
		return nil
	}
	jpath := journal.Path(out, plan.Spec.ID)
	fmt.Fprintf(log, "%s: discarding %s, the journal of a run with other settings\n", tag, jpath)
	for _, f := range []string{jpath, ipath} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeResult writes a result's files, printing figure warnings.
func writeResult(out string, res *runner.Result, opts results.Options, log io.Writer) error {
	_, warns, err := results.WriteFilesWith(out, res, opts)
	for _, w := range warns {
		fmt.Fprintf(log, "%s: figure: %s\n", res.Spec.ID, w)
	}
	return err
}

// figuresPresent reports whether every figure of res is in dir, in every
// format.
func figuresPresent(dir string, res *runner.Result) bool {
	for _, f := range results.Figures(res.Spec, results.Summarize(res)) {
		for _, ext := range figure.Formats {
			if !fileExists(filepath.Join(dir, f.Base+"."+ext)) {
				return false
			}
		}
	}
	return true
}

// fileExists reports whether path exists (as any kind of file).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
