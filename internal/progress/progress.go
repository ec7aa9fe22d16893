// Package progress reports the advance of a long computation on stderr:
// on a terminal (a StatusLine), a bar redrawn in place; otherwise
// "ID: done/total units (p%), elapsed, rate, ~left" lines, sparse enough
// for a log file. It only reads the counts it is given: it never affects
// what is computed.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

const (
	lineEvery   = 2 * time.Second        // plain lines: at most one per period
	quietEvery  = time.Minute            // plain lines: with no advance, one per this period
	silentFirst = time.Second            // plain lines: none in a computation's first second
	statusEvery = 250 * time.Millisecond // a status line: its refresh period
	barWidth    = 20                     // cells of a status line's bar
)

// StatusLine is a destination that shows one line updated in place, as a
// terminal does: Status replaces the line ("" removes it), and what is
// written goes above it. A Meter writing to a StatusLine shows a bar with
// the rate and the time left instead of periodic lines.
type StatusLine interface {
	io.Writer
	Status(line string)
}

// Meter reports the advance of a computation of total units: on a
// StatusLine, a bar refreshed at every Tick; otherwise a plain line at a
// Tick at most every lineEvery, only when the count has moved since the
// last line (or quietEvery has passed without, so a log shows the
// computation is alive) and none in the first second. Its methods are
// safe for concurrent use.
type Meter struct {
	mu          sync.Mutex
	w           io.Writer
	status      StatusLine // nil: plain lines
	id, unit    string
	done, total int
	lastDone    int // done at the last plain line; -1 before the first
	start, last time.Time
	now         func() time.Time // the clock: time.Now (tests set their own)
	ended       bool
}

// New returns a Meter writing to w (nil: nowhere) for total units named
// unit (singular: "task"), its lines starting with id.
func New(w io.Writer, id, unit string, total int) *Meter {
	now := time.Now()
	m := &Meter{w: w, id: id, unit: unit, total: total, lastDone: -1, start: now, last: now, now: time.Now}
	m.status, _ = w.(StatusLine)
	return m
}

// Every is the period at which Tick should be called.
func (m *Meter) Every() time.Duration {
	if m.status != nil {
		return statusEvery
	}
	return lineEvery
}

// Add counts n more units done.
func (m *Meter) Add(n int) {
	m.mu.Lock()
	m.done += n
	m.mu.Unlock()
}

// Set sets the units done.
func (m *Meter) Set(done int) {
	m.mu.Lock()
	m.done = done
	m.mu.Unlock()
}

// units is "1 task" or "n tasks".
func (m *Meter) units(n int) string {
	if n == 1 {
		return "1 " + m.unit
	}
	return fmt.Sprintf("%d %ss", n, m.unit)
}

// rate returns "r units/s" (or "s s/unit" below one per second) and the
// estimated time left, once a unit is done.
func (m *Meter) rate(el time.Duration) (rate string, left time.Duration, ok bool) {
	if m.done == 0 || el <= 0 {
		return "", 0, false
	}
	r := float64(m.done) / el.Seconds()
	switch {
	case r >= 1e4:
		rate = fmt.Sprintf("%.0f %ss/s", r, m.unit)
	case r >= 1:
		rate = fmt.Sprintf("%.3g %ss/s", r, m.unit)
	default:
		rate = fmt.Sprintf("%.3g s/%s", 1/r, m.unit)
	}
	return rate, time.Duration(float64(el) * float64(m.total-m.done) / float64(m.done)), true
}

// Tick shows the advance, as the type's comment says.
func (m *Meter) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil || m.ended {
		return
	}
	now := m.now()
	el := now.Sub(m.start)
	if m.status != nil {
		m.status.Status(m.bar(el))
		return
	}
	since := now.Sub(m.last)
	if el < silentFirst || since < lineEvery-lineEvery/10 {
		return
	}
	if m.done == m.lastDone && since < quietEvery-lineEvery/10 {
		return
	}
	m.last, m.lastDone = now, m.done
	line := fmt.Sprintf("%s: %d/%s (%d%%), %s elapsed", m.id, m.done, m.units(m.total), m.percent(), roundDur(el))
	if rate, left, ok := m.rate(el); ok {
		line += fmt.Sprintf(", %s, ~%s left", rate, roundDur(left))
	}
	fmt.Fprintln(m.w, line)
}

func (m *Meter) percent() int { return int(100 * int64(m.done) / int64(max(1, m.total))) }

// bar is the status line: "ID ███████░░░ 7/12 58% · 1.2 tasks/s · 4s · ~3s left".
func (m *Meter) bar(el time.Duration) string {
	full := min(barWidth, max(0, barWidth*m.done/max(1, m.total)))
	line := fmt.Sprintf("%s %s%s %d/%d %d%% · %s", m.id, strings.Repeat("█", full), strings.Repeat("░", barWidth-full),
		m.done, m.total, m.percent(), roundDur(el))
	if rate, left, ok := m.rate(el); ok {
		line += fmt.Sprintf(" · %s · ~%s left", rate, roundDur(left))
	}
	return line
}

// Finish ends a computation that completed: it removes the status line
// and writes "ID: total units done in elapsed".
func (m *Meter) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil || m.ended {
		return
	}
	m.ended = true
	if m.status != nil {
		m.status.Status("")
	}
	fmt.Fprintf(m.w, "%s: %s done in %s\n", m.id, m.units(m.total), roundDur(m.now().Sub(m.start)))
}

// Stop ends a computation that did not complete: it removes the status
// line. Later calls of Tick and Finish write nothing.
func (m *Meter) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return
	}
	m.ended = true
	if m.status != nil {
		m.status.Status("")
	}
}

// Watch calls Tick every Every on its own goroutine until the returned
// function is called; that function returns once the ticking has stopped.
func (m *Meter) Watch() (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(m.Every())
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.Tick()
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-stopped }
}

func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
