package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/wcmc-project/wcmc/figure"
)

// Markdown writes the report as markdown: the machine, the kernel table
// (rate, bound, ratio, target, allocations) and the scaling slopes.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s in %s%s: %s, %d CPUs (GOMAXPROCS %d), %s %s, BLAS %s, Gibbs row kernels %s.\n\n",
		r.Start.Format("2006-01-02 15:04 MST"), r.Duration.Round(time.Second), quickNote(r.Quick),
		r.CPU, r.NumCPU, r.GOMAXPROCS, r.GoVersion, r.GOARCH, r.BLAS, r.RowKernels)
	b.WriteString("Each time is the best of interleaved rounds with its bound; ratio = time / bound time for the same work.\n\n")
	b.WriteString("| kernel | size | time/op | rate | bound | bound rate | ratio | target | allocs/op | notes |\n")
	b.WriteString("|---|---|---:|---:|---|---:|---:|---|---:|---|\n")
	for _, k := range r.Kernels {
		bound, brate, ratio := "—", "—", "—"
		if k.Bound != "" {
			bound = k.Bound
			brate = fmtRate(k.BoundRate) + " " + k.Unit
			ratio = fmt.Sprintf("%.2f×", k.Ratio)
		}
		target := "—"
		if k.Target != "" {
			mark := "✗"
			if k.Met {
				mark = "✓"
			}
			target = k.Target + " " + mark
		}
		allocs := "—"
		if k.Allocs >= 0 {
			allocs = strconv.FormatFloat(k.Allocs, 'g', 3, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s %s | %s | %s | %s | %s | %s | %s |\n",
			k.Name, k.Size, fmtDur(k.Time), fmtRate(k.Rate), k.Unit, bound, brate, ratio, target, allocs, k.Note)
	}
	if len(r.Scaling) > 0 {
		b.WriteString("\nScaling (time per operation; slope of log time on log size):\n\n")
		b.WriteString("| series | sizes | times | slope |\n|---|---|---|---:|\n")
		for _, s := range r.Scaling {
			xs, ts := make([]string, len(s.X)), make([]string, len(s.X))
			for i := range s.X {
				xs[i] = strconv.FormatFloat(s.X[i], 'g', -1, 64)
				ts[i] = fmtDur(time.Duration(s.Seconds[i] * 1e9))
			}
			fmt.Fprintf(&b, "| %s | %s = %s | %s | %.2f |\n", s.Name, s.Param, strings.Join(xs, ", "), strings.Join(ts, ", "), s.Slope)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quickNote(q bool) string {
	if q {
		return " (--quick)"
	}
	return ""
}

// Chart returns the log-log scaling plot: one curve per series, time per
// operation against the size varied.
func (r *Report) Chart() figure.Chart {
	c := figure.Chart{
		Title:  "time per operation against size (legend: log-log slope)",
		XLabel: "size varied (N, d, K or S)",
		YLabel: "time per operation (s)",
		LogX:   true, LogY: true,
		Width: 8 * vg.Inch, Height: 6 * vg.Inch,
	}
	for _, s := range r.Scaling {
		name := s.Short
		if name == "" {
			name = s.Name
		}
		c.Series = append(c.Series, figure.Series{
			Name: fmt.Sprintf("%s: %.2f", name, s.Slope),
			X:    s.X, Mean: s.Seconds,
		})
	}
	return c
}

// fmtRate prints a rate with three significant digits and thousands
// separators for large values.
func fmtRate(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', 3, 64)
	case math.Abs(v) >= 1000:
		digits := int(math.Floor(math.Log10(math.Abs(v)))) + 1
		p := math.Pow(10, float64(digits-3))
		return group(strconv.FormatFloat(math.Round(v/p)*p, 'f', 0, 64))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// group inserts commas between groups of three digits.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtDur prints a duration with three significant digits.
func fmtDur(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'f', 2, 64) + " s"
	case s >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'g', 3, 64) + " ms"
	case s >= 1e-6:
		return strconv.FormatFloat(s*1e6, 'g', 3, 64) + " µs"
	}
	return strconv.FormatFloat(s*1e9, 'g', 3, 64) + " ns"
}
