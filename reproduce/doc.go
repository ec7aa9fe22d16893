package reproduce

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/report"
)

// Markers around the verdict table that UpdateDoc rewrites.
const (
	DocBegin = "<!-- BEGIN wcmc reproduce verdicts -->"
	DocEnd   = "<!-- END wcmc reproduce verdicts -->"
)

// CheckDoc reports a document that UpdateDoc cannot rewrite: unreadable,
// or without the markers.
func CheckDoc(path string) error {
	_, _, _, err := readDocMarkers(path)
	return err
}

// readDocMarkers reads path and finds the verdict-table markers in it: the
// offsets of DocBegin and DocEnd.
func readDocMarkers(path string) (b []byte, begin, end int, err error) {
	b, err = os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("--update-doc: %w", err)
	}
	begin = bytes.Index(b, []byte(DocBegin))
	end = bytes.Index(b, []byte(DocEnd))
	if begin < 0 || end < begin {
		return nil, 0, 0, fmt.Errorf("--update-doc %s: the file has no %q … %q markers", path, DocBegin, DocEnd)
	}
	return b, begin, end, nil
}

// UpdateDoc replaces the text between DocBegin and DocEnd in path with the
// report's verdict table (report.WriteVerdictTable).
func UpdateDoc(path string, rep *report.Report) error {
	b, i, j, err := readDocMarkers(path)
	if err != nil {
		return err
	}
	var table bytes.Buffer
	if err := rep.WriteVerdictTable(&table); err != nil {
		return err
	}
	var out bytes.Buffer
	out.Write(b[:i+len(DocBegin)])
	out.WriteString("\n")
	out.Write(table.Bytes())
	out.Write(b[j:])
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(out.Bytes())
		return err
	})
}
