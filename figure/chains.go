package figure

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// ChainKind is what a ChainGrid panel shows.
type ChainKind int

const (
	// Trace panels draw each chain's draws against the draw index.
	Trace ChainKind = iota
	// Rank panels draw, for each chain, the histogram of the ranks of its
	// draws among the draws of all chains (Vehtari et al. 2021, §4.1):
	// flat when the chains mix, since every chain then holds a uniform
	// share of every part of the pooled distribution.
	Rank
)

// DefaultRankBins is the number of rank-histogram bins when ChainGrid
// leaves Bins zero (fewer when the chains are shorter).
const DefaultRankBins = 20

// maxTracePoints bounds the points a trace line draws per chain: longer
// chains are drawn through the minimum and maximum of consecutive blocks
// of draws, which keeps every excursion visible.
const maxTracePoints = 2000

// ChainDPI is the resolution of PNG chain grids.
const ChainDPI = 150

// Panel size and gap between panels in a ChainGrid.
const (
	panelWidth  = 3.2 * vg.Inch
	panelHeight = 2.3 * vg.Inch
)

// ChainGrid is a figure of MCMC diagnostics: one panel per parameter, in
// rows of up to Cols panels, each drawing every chain in its own colour
// (Color(c)), with a legend of the chains on the right.
type ChainGrid struct {
	Title string
	Kind  ChainKind
	// Names are the panels' titles; Draws[p][c] are the draws of chain c
	// of panel p's parameter. Every chain has the same length.
	Names []string
	Draws [][][]float64
	// Cols is the most panels in a row (0: 3). Bins is the number of bins
	// of a rank histogram (0: DefaultRankBins).
	Cols, Bins int
}

// check reports a grid with nothing to draw or ragged draws.
func (g ChainGrid) check() error {
	if len(g.Draws) == 0 {
		return errors.New("figure: no parameters to plot")
	}
	if len(g.Names) != len(g.Draws) {
		return fmt.Errorf("figure: %d names for %d parameters", len(g.Names), len(g.Draws))
	}
	c, s := len(g.Draws[0]), 0
	if c > 0 {
		s = len(g.Draws[0][0])
	}
	if c == 0 || s == 0 {
		return errors.New("figure: no draws to plot")
	}
	for p, chains := range g.Draws {
		if len(chains) != c {
			return fmt.Errorf("figure: parameter %s has %d chains, %s has %d", g.Names[p], len(chains), g.Names[0], c)
		}
		for k, x := range chains {
			if len(x) != s {
				return fmt.Errorf("figure: chain %d of %s has %d draws, want %d", k+1, g.Names[p], len(x), s)
			}
		}
	}
	return nil
}

// bins returns the number of rank bins for chains of s draws.
func (g ChainGrid) bins(s int) int {
	b := g.Bins
	if b <= 0 {
		b = DefaultRankBins
	}
	return min(b, s)
}

// RankCounts returns, for each chain of x (all of one length S), the
// histogram over bins equal-width bins of the ranks 1…N of its draws among
// all N = C·S draws (ties get their mean rank): a draw of rank r falls in
// bin ⌊(r−1)·bins/N⌋. Each chain's counts sum to S; for chains that mix,
// each count is near S/bins. It panics if bins < 1 or the chains differ in
// length.
func RankCounts(x [][]float64, bins int) [][]int {
	if bins < 1 {
		panic("figure: fewer than one rank bin")
	}
	type draw struct {
		v    float64
		c, i int
	}
	var all []draw
	for c, xc := range x {
		if len(xc) != len(x[0]) {
			panic("figure: chains differ in length")
		}
		for i, v := range xc {
			all = append(all, draw{v, c, i})
		}
	}
	slices.SortStableFunc(all, func(a, b draw) int { return cmp.Compare(a.v, b.v) })
	n := float64(len(all))
	out := make([][]int, len(x))
	for c := range out {
		out[c] = make([]int, bins)
	}
	for lo := 0; lo < len(all); {
		hi := lo + 1
		for hi < len(all) && cmp.Compare(all[hi].v, all[lo].v) == 0 {
			hi++
		}
		r := float64(lo+hi+1) / 2 // mean of the ranks lo+1 … hi
		b := min(bins-1, int(math.Floor((r-1)*float64(bins)/n)))
		for _, d := range all[lo:hi] {
			out[d.c][b]++
		}
		lo = hi
	}
	return out
}

// tracePoints returns the points of a trace line of x: every draw, or for
// long chains the minimum and maximum of each block of draws in order.
func tracePoints(x []float64) plotter.XYs {
	if len(x) <= maxTracePoints {
		pts := make(plotter.XYs, len(x))
		for i, v := range x {
			pts[i] = plotter.XY{X: float64(i), Y: v}
		}
		return pts
	}
	block := (len(x) + maxTracePoints/2 - 1) / (maxTracePoints / 2)
	var pts plotter.XYs
	for lo := 0; lo < len(x); lo += block {
		hi := min(lo+block, len(x))
		lo1, hi1 := lo, lo
		for i := lo; i < hi; i++ {
			if x[i] < x[lo1] {
				lo1 = i
			}
			if x[i] > x[hi1] {
				hi1 = i
			}
		}
		a, b := min(lo1, hi1), max(lo1, hi1)
		pts = append(pts, plotter.XY{X: float64(a), Y: x[a]})
		if b != a {
			pts = append(pts, plotter.XY{X: float64(b), Y: x[b]})
		}
	}
	return pts
}

// chainLine returns the line style of chain c.
func chainLine(c int) draw.LineStyle {
	col := Color(c)
	col.A = 210
	return draw.LineStyle{Color: col, Width: pt(0.6)}
}

// panel returns the plot of parameter p.
func (g ChainGrid) panel(p int) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = g.Names[p]
	pl.Title.TextStyle.Font.Size = pt(9)
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font.Size = pt(8)
		a.Tick.Label.Font.Size = pt(7)
	}
	chains := g.Draws[p]
	switch g.Kind {
	case Trace:
		pl.X.Label.Text = "draw"
		for c, x := range chains {
			l, err := plotter.NewLine(tracePoints(x))
			if err != nil {
				return nil, fmt.Errorf("%s, chain %d: %w", g.Names[p], c+1, err)
			}
			l.LineStyle = chainLine(c)
			pl.Add(l)
		}
	case Rank:
		pl.X.Label.Text = "rank among all draws"
		pl.Y.Label.Text = "count"
		s := len(chains[0])
		bins := g.bins(s)
		n := float64(len(chains) * s)
		for c, counts := range RankCounts(chains, bins) {
			pts := make(plotter.XYs, bins+1)
			for b := range pts {
				pts[b].X = float64(b) * n / float64(bins)
				pts[b].Y = float64(counts[min(b, bins-1)])
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.StepStyle = plotter.PostStep
			l.LineStyle = chainLine(c)
			l.LineStyle.Width = pt(1)
			pl.Add(l)
		}
		// The expected count of every bin under mixing.
		u, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(s) / float64(bins)}, {X: n, Y: float64(s) / float64(bins)}})
		if err != nil {
			return nil, err
		}
		u.LineStyle = draw.LineStyle{Color: color.Gray{Y: 90}, Width: pt(0.8), Dashes: []vg.Length{pt(3), pt(2)}}
		pl.Add(u)
		pl.X.Min, pl.X.Max, pl.Y.Min = 0, n, 0
	default:
		return nil, fmt.Errorf("figure: unknown chain plot kind %d", g.Kind)
	}
	return pl, nil
}

// size returns the grid's columns and rows.
func (g ChainGrid) size() (cols, rows int) {
	cols = g.Cols
	if cols <= 0 {
		cols = 3
	}
	cols = min(cols, len(g.Draws))
	return cols, (len(g.Draws) + cols - 1) / cols
}

// Encode writes g in format ("png", "svg", "pdf", …) to w. It returns an
// error for a grid without draws or with ragged draws.
func (g ChainGrid) Encode(w io.Writer, format string) error {
	if err := g.check(); err != nil {
		return err
	}
	cols, rows := g.size()
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for p := range g.Draws {
		pl, err := g.panel(p)
		if err != nil {
			return err
		}
		plots[p/cols][p%cols] = pl
	}
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = pt(8)
	for c := range g.Draws[0] {
		l, err := plotter.NewLine(plotter.XYs{{}, {X: 1}})
		if err != nil {
			return err
		}
		l.LineStyle = chainLine(c)
		l.LineStyle.Width = pt(2)
		leg.Add(fmt.Sprintf("chain %d", c+1), l)
	}
	title := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, pt(11)), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	title.Font.Weight = stdfont.WeightBold
	titleH := vg.Length(0)
	if g.Title != "" {
		titleH = title.FontExtents().Height + pt(6)
	}
	legW := 0.9 * vg.Inch
	wd := vg.Length(cols)*panelWidth + legW
	ht := vg.Length(rows)*panelHeight + titleH

	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(ChainDPI))}
	default:
		var err error
		if cw, err = draw.NewFormattedCanvas(wd, ht, format); err != nil {
			return err
		}
	}
	dc := draw.New(cw)
	if g.Title != "" {
		dc.FillText(title, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pt(3)}, g.Title)
	}
	grid := draw.Crop(dc, pt(4), -legW, pt(2), -titleH)
	tiles := draw.Tiles{Cols: cols, Rows: rows, PadX: pt(10), PadY: pt(8)}
	canvases := plot.Align(plots, tiles, grid)
	for r := range plots {
		for c, pl := range plots[r] {
			if pl != nil {
				pl.Draw(canvases[r][c])
			}
		}
	}
	lc := dc
	lc.Min.X = dc.Max.X - legW + pt(4)
	lc.Max.Y = grid.Max.Y
	leg.Top, leg.Left = true, true
	leg.Draw(lc)
	_, err := cw.WriteTo(w)
	return err
}

// Save writes g to base+"."+format for each format (e.g. "png", "svg"),
// each through a temporary file renamed into place, and returns the paths
// written.
func (g ChainGrid) Save(base string, formats ...string) ([]string, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	var files []string
	for _, ext := range formats {
		path := base + "." + ext
		if err := atomicfile.Write(path, func(f io.Writer) error { return g.Encode(f, ext) }); err != nil {
			return files, fmt.Errorf("writing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
