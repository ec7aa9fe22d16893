package main

import (
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// statusWriter is stderr on a terminal: it keeps one progress line (see
// runner.StatusLine) at the bottom, redrawn in place, and prints every
// other line above it.
type statusWriter struct {
	mu    sync.Mutex
	w     io.Writer
	width int    // the terminal's columns; the status line is cut to fit
	line  string // the status line shown, "" if none
}

// clear is the carriage return and "erase line" control sequence.
const clear = "\r\x1b[K"

func (s *statusWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != "" {
		io.WriteString(s.w, clear)
	}
	n, err := s.w.Write(p)
	if s.line != "" && len(p) > 0 && p[len(p)-1] == '\n' {
		io.WriteString(s.w, s.line)
	}
	return n, err
}

// Status replaces the status line ("" removes it).
func (s *statusWriter) Status(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.width > 1 && utf8.RuneCountInString(line) >= s.width {
		r := []rune(line)
		line = string(r[:s.width-2]) + "…"
	}
	if line == "" && s.line == "" {
		return
	}
	io.WriteString(s.w, clear+line)
	s.line = line
}

// progressWriter returns where progress goes: on a terminal (and TERM not
// "dumb"), a statusWriter; otherwise stderr itself, which gets plain
// periodic lines.
func progressWriter(stderr io.Writer) io.Writer {
	f, ok := stderr.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return stderr
	}
	width, ok := terminalWidth(f)
	if !ok {
		return stderr
	}
	return &statusWriter{w: stderr, width: width}
}
