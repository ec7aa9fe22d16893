package runner

import "github.com/wcmc-project/wcmc/internal/progress"

// StatusLine is a progress destination that shows one line updated in
// place, as a terminal does: Status replaces the line ("" removes it), and
// what is written goes above it. Options.Progress given a StatusLine gets
// a bar with the rate and the time left instead of periodic lines.
type StatusLine = progress.StatusLine
