package runner

import (
	"fmt"
	"io"
	"time"
)

const (
	progressEvery = 2 * time.Second // at most one line per period
	progressAfter = time.Second     // silent for runs shorter than this
)

// progress prints "ID: done/total tasks (p%), elapsed, ~left" lines. It only
// reads counters: it never affects results.
type progress struct {
	w           io.Writer
	id          string
	done, total int
	start, last time.Time
}

func newProgress(w io.Writer, id string, total int) *progress {
	now := time.Now()
	return &progress{w: w, id: id, total: total, start: now, last: now}
}

func (p *progress) tick() {
	if p.w == nil {
		return
	}
	now := time.Now()
	el := now.Sub(p.start)
	if el < progressAfter || now.Sub(p.last) < progressEvery-progressEvery/10 {
		return
	}
	p.last = now
	line := fmt.Sprintf("%s: %d/%d tasks (%d%%), %s elapsed", p.id, p.done, p.total, 100*p.done/max(1, p.total), roundDur(el))
	if p.done > 0 {
		left := time.Duration(float64(el) * float64(p.total-p.done) / float64(p.done))
		line += fmt.Sprintf(", ~%s left", roundDur(left))
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) finish() {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "%s: %d tasks done in %s\n", p.id, p.total, roundDur(time.Since(p.start)))
}

func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
