package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// statusRecorder is a StatusLine that records the status lines shown and
// the text written.
type statusRecorder struct {
	bytes.Buffer
	shown []string
}

func (s *statusRecorder) Status(line string) { s.shown = append(s.shown, line) }

// Not on a terminal: plain lines with the counts, the rate and the time
// left, at most one per period and none in the first second.
func TestProgressPlainLines(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, "demo", "task", 4)
	at := p.start
	p.now = func() time.Time { return at }
	if p.Every() != lineEvery {
		t.Errorf("period %v, want %v", p.Every(), lineEvery)
	}
	p.Tick()
	if out.Len() != 0 {
		t.Errorf("a line within the first second: %q", out.String())
	}
	at = at.Add(3 * time.Second)
	p.Set(2)
	p.Tick()
	p.Tick() // too soon for another line
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1: %q", len(lines), out.String())
	}
	for _, want := range []string{"demo: 2/4 tasks (50%)", "elapsed", "s/task", "left"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("line %q lacks %q", lines[0], want)
		}
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Errorf("terminal control characters in plain output: %q", out.String())
	}
	at = at.Add(10 * time.Second)
	p.Tick() // no task finished since the last line: quiet
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("%d lines with no task finished, want 1: %q", n, out.String())
	}
	at = at.Add(quietEvery)
	p.Tick() // quiet for a minute: a line to show it is alive
	p.Set(3)
	at = at.Add(lineEvery)
	p.Tick() // a task finished: a line
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("%d lines after a quiet minute and a finished task, want 3: %q", n, out.String())
	}
	p.Finish()
	if !strings.HasSuffix(out.String(), "demo: 4 tasks done in 1m15s\n") {
		t.Errorf("final line: %q", out.String())
	}
}

// On a status line: a bar refreshed at every tick, removed at the end
// before the final line.
func TestProgressStatusLine(t *testing.T) {
	var s statusRecorder
	p := New(&s, "demo", "task", 4)
	at := p.start
	p.now = func() time.Time { return at }
	if p.Every() != statusEvery {
		t.Errorf("period %v, want %v", p.Every(), statusEvery)
	}
	p.Tick()
	at = at.Add(time.Second)
	p.Set(2)
	p.Tick()
	if len(s.shown) != 2 {
		t.Fatalf("%d status lines, want 2: %q", len(s.shown), s.shown)
	}
	bar := s.shown[1]
	for _, want := range []string{"demo ", strings.Repeat("█", barWidth/2) + strings.Repeat("░", barWidth/2), "2/4 50%", "2 tasks/s", "~1s left"} {
		if !strings.Contains(bar, want) {
			t.Errorf("status %q lacks %q", bar, want)
		}
	}
	if s.Len() != 0 {
		t.Errorf("text written while running: %q", s.String())
	}
	p.Finish()
	if s.shown[len(s.shown)-1] != "" || !strings.HasPrefix(s.String(), "demo: 4 tasks done in") {
		t.Errorf("finish: status %q, text %q", s.shown, s.String())
	}
}
