package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ReadCSV reads a data set for the probit model (eq: probit model) from
// comma-separated rows "label,x1,…,xd": the label v_n ∈ {0, 1} first, then
// the d ≥ 1 covariates u_n. A UTF-8 byte order mark is skipped. The first
// line is a header, skipped, when none of its fields is a number, a data
// row when all are; any other first line is an error. All rows must have the same number
// of fields and every value must be a finite number. Errors name the file
// (name), the line and the 1-based column.
func ReadCSV(r io.Reader, name string) (Set, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	var (
		labels    []float64
		covs      []float64
		width     int
		widthLine int
		first     = true
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return Set{}, fmt.Errorf("csv %s: line %d, column %d: %v", name, pe.Line, pe.Column, pe.Err)
			}
			return Set{}, fmt.Errorf("csv %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			width, widthLine = len(rec), line
			if width < 2 {
				return Set{}, fmt.Errorf("csv %s: line %d has %d field(s), want a label and at least one covariate (label,x1,…,xd)", name, line, width)
			}
			rec[0] = strings.TrimPrefix(rec[0], "\uFEFF") // a UTF-8 byte order mark
			numeric := 0
			for _, f := range rec {
				if _, err := strconv.ParseFloat(f, 64); err == nil {
					numeric++
				}
			}
			switch numeric {
			case 0:
				continue // header
			case width:
			default:
				return Set{}, fmt.Errorf("csv %s: line %d is neither a header (no field a number) nor a data row (every field a number): %d of its %d fields are numbers", name, line, numeric, width)
			}
		}
		if len(rec) != width {
			return Set{}, fmt.Errorf("csv %s: line %d has %d fields, want %d as on line %d", name, line, len(rec), width, widthLine)
		}
		for j, f := range rec {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return Set{}, fmt.Errorf("csv %s: line %d, column %d (%s): %q is not a finite number", name, line, j+1, csvColumnName(j), f)
			}
			if j == 0 {
				if x != 0 && x != 1 {
					return Set{}, fmt.Errorf("csv %s: line %d, column 1 (label): %q, want 0 or 1", name, line, f)
				}
				labels = append(labels, x)
				continue
			}
			covs = append(covs, x)
		}
	}
	if len(labels) == 0 {
		return Set{}, fmt.Errorf("csv %s: no data rows (want rows label,x1,…,xd)", name)
	}
	return Set{U: mat.NewDense(len(labels), width-1, covs), V: labels}, nil
}

func csvColumnName(j int) string {
	if j == 0 {
		return "label"
	}
	return "x" + strconv.Itoa(j)
}

// WriteCSV writes s as a header line "label,x1,…,xd" followed by one row
// "v_n,u_n1,…,u_nd" per data point, numbers in the shortest form that reads
// back exactly. It returns an error, writing nothing, if s fails Validate.
func WriteCSV(w io.Writer, s Set) error {
	if err := s.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	d := s.Dim()
	buf := []byte("label")
	for j := 1; j <= d; j++ {
		buf = append(buf, ",x"...)
		buf = strconv.AppendInt(buf, int64(j), 10)
	}
	buf = append(buf, '\n')
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	for n, v := range s.V {
		buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
		for _, x := range s.U.RawRowView(n) {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
