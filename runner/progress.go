package runner

import (
	"fmt"
	"io"
	"strings"
	"time"
)

const (
	progressEvery = 2 * time.Second        // plain lines: at most one per period
	progressQuiet = time.Minute            // plain lines: with no task finished, one per this period
	progressAfter = time.Second            // plain lines: silent for runs shorter than this
	statusEvery   = 250 * time.Millisecond // a status line: its refresh period
	barWidth      = 20                     // cells of a status line's bar
)

// StatusLine is a progress destination that shows one line updated in
// place, as a terminal does: Status replaces the line ("" removes it), and
// what is written goes above it. Options.Progress given a StatusLine gets
// a bar with the rate and the time left instead of periodic lines.
type StatusLine interface {
	io.Writer
	Status(line string)
}

// progress reports a sweep's advance: on a StatusLine, a bar refreshed in
// place; otherwise "ID: done/total tasks (p%), rate, elapsed, ~left"
// lines, at most one every progressEvery and only when a task has
// finished since the last one (or progressQuiet has passed without one, so
// a log shows the run is alive without a line every few seconds). It only
// reads counters: it never affects results.
type progress struct {
	w           io.Writer
	status      StatusLine // nil: plain lines
	id          string
	done, total int
	lastDone    int // done at the last plain line; -1 before the first
	start, last time.Time
	now         func() time.Time // the clock: time.Now (tests set their own)
}

func newProgress(w io.Writer, id string, total int) *progress {
	now := time.Now()
	p := &progress{w: w, id: id, total: total, lastDone: -1, start: now, last: now, now: time.Now}
	p.status, _ = w.(StatusLine)
	return p
}

// every is the period at which tick should be called.
func (p *progress) every() time.Duration {
	if p.status != nil {
		return statusEvery
	}
	return progressEvery
}

// rate returns "r tasks/s" (or "s s/task" below one per second) and the
// estimated time left, once a task is done.
func (p *progress) rate(el time.Duration) (rate string, left time.Duration, ok bool) {
	if p.done == 0 || el <= 0 {
		return "", 0, false
	}
	r := float64(p.done) / el.Seconds()
	if r >= 1 {
		rate = fmt.Sprintf("%.3g tasks/s", r)
	} else {
		rate = fmt.Sprintf("%.3g s/task", 1/r)
	}
	return rate, time.Duration(float64(el) * float64(p.total-p.done) / float64(p.done)), true
}

func (p *progress) tick() {
	if p.w == nil {
		return
	}
	now := p.now()
	el := now.Sub(p.start)
	if p.status != nil {
		p.status.Status(p.bar(el))
		return
	}
	since := now.Sub(p.last)
	if el < progressAfter || since < progressEvery-progressEvery/10 {
		return
	}
	if p.done == p.lastDone && since < progressQuiet-progressEvery/10 {
		return
	}
	p.last, p.lastDone = now, p.done
	line := fmt.Sprintf("%s: %d/%d tasks (%d%%), %s elapsed", p.id, p.done, p.total, 100*p.done/max(1, p.total), roundDur(el))
	if rate, left, ok := p.rate(el); ok {
		line += fmt.Sprintf(", %s, ~%s left", rate, roundDur(left))
	}
	fmt.Fprintln(p.w, line)
}

// bar is the status line: "ID ███████░░░ 7/12 58% · 1.2 tasks/s · 4s · ~3s left".
func (p *progress) bar(el time.Duration) string {
	full := barWidth * p.done / max(1, p.total)
	line := fmt.Sprintf("%s %s%s %d/%d %d%% · %s", p.id, strings.Repeat("█", full), strings.Repeat("░", barWidth-full),
		p.done, p.total, 100*p.done/max(1, p.total), roundDur(el))
	if rate, left, ok := p.rate(el); ok {
		line += fmt.Sprintf(" · %s · ~%s left", rate, roundDur(left))
	}
	return line
}

func (p *progress) finish() {
	if p.w == nil {
		return
	}
	if p.status != nil {
		p.status.Status("")
	}
	fmt.Fprintf(p.w, "%s: %d tasks done in %s\n", p.id, p.total, roundDur(p.now().Sub(p.start)))
}

// stop removes the status line of a sweep that ends without finishing.
func (p *progress) stop() {
	if p.status != nil {
		p.status.Status("")
	}
}

func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
