package figure

// Encoding: the page layout around the plot (title, wrapped caption,
// legend) and the PNG, SVG and PDF files.

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// wrap breaks s into lines at most width long in sty (a line break in s
// always starts a new line; a word longer than width stands alone).
func wrap(sty text.Style, s string, width vg.Length) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case sty.Width(line+" "+w) <= width:
				line += " " + w
			default:
				out = append(out, line)
				line = w
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// fitLabel returns label, broken onto two lines at the space nearest its
// middle and then set in a smaller font (down to 7 pt) as needed, so that
// it is at most room long.
func fitLabel(sty text.Style, label string, room vg.Length) (string, vg.Length) {
	size := sty.Font.Size
	if room <= 0 || sty.Width(label) <= room {
		return label, size
	}
	if !strings.Contains(label, "\n") {
		best := -1
		for i, r := range label {
			if r == ' ' && (best < 0 || abs(i-len(label)/2) < abs(best-len(label)/2)) {
				best = i
			}
		}
		if best > 0 {
			label = label[:best] + "\n" + label[best+1:]
		}
	}
	if w := sty.Width(label); w > room {
		size = max(pt(7), size*room/w)
	}
	return label, size
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// PNGDPI is the resolution of PNG figures: print resolution.
const PNGDPI = 300

// Formats are the file formats Save writes, in order.
var Formats = []string{"png", "svg", "pdf"}

// textStyle returns the text style of the figure at size points, centred
// horizontally and aligned at y, bold if asked.
func textStyle(size float64, y draw.YAlignment, bold bool) text.Style {
	f := font.From(plot.DefaultFont, pt(size))
	if bold {
		f.Weight = stdfont.WeightBold
	}
	return text.Style{Color: color.Black, Font: f, XAlign: draw.XCenter, YAlign: y, Handler: plot.DefaultTextHandler}
}

// Encode writes c in format ("png", "svg", "pdf", …) to w: the title and
// the wrapped caption across the top, the plot, and the legend in a
// column on its right. It returns the warnings about values left out (see
// Series) and panics if a series' slices differ in length.
func (c Chart) Encode(w io.Writer, format string) ([]string, error) {
	p, leg, warns, err := c.build()
	if err != nil {
		return nil, err
	}
	wd, ht := c.Width, c.Height
	if wd == 0 {
		wd = DefaultWidth
	}
	if ht == 0 {
		ht = DefaultHeight
	}
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(PNGDPI))}
	case "pdf":
		cw = newOutlinedPDF(wd, ht)
	default:
		if cw, err = draw.NewFormattedCanvas(wd, ht, format); err != nil {
			return nil, err
		}
	}
	dc := draw.New(cw)
	gap := pt(6)
	dc = draw.Crop(dc, gap, -gap, gap/2, -gap/2)

	// Title and caption, centred across the figure.
	y := dc.Max.Y
	if c.Title != "" {
		sty := textStyle(titleSize, draw.YTop, true)
		for _, line := range wrap(sty, c.Title, dc.Size().X) {
			dc.FillText(sty, vg.Point{X: dc.Center().X, Y: y}, line)
			y -= sty.FontExtents().Height
		}
	}
	if c.Caption != "" {
		sty := textStyle(captionSize, draw.YTop, false)
		sty.Color = color.Gray{Y: 60}
		for _, line := range wrap(sty, c.Caption, dc.Size().X-2*gap) {
			dc.FillText(sty, vg.Point{X: dc.Center().X, Y: y}, line)
			y -= sty.FontExtents().Height
		}
	}
	if y < dc.Max.Y {
		y -= gap
	}
	dc.Max.Y = y

	r := leg.Rectangle(dc)
	legW := r.Max.X - r.Min.X + 2*gap

	// The axis labels are drawn here rather than by gonum, which reserves
	// room for them around the arithmetic middle of the axis range: on a
	// log axis that is far off-centre and squeezes the data area.
	xl := p.X.Label.Text
	xsty := textStyle(labelSize, draw.YBottom, false)
	ysty := textStyle(labelSize, draw.YBottom, false)
	yl, ysize := fitLabel(ysty, p.Y.Label.Text, dc.Size().Y-0.6*vg.Inch)
	ysty.Font.Size = ysize
	p.X.Label.Text, p.Y.Label.Text = "", ""
	var left, bottom vg.Length
	if yl != "" {
		left = ysty.Height(yl) + gap
	}
	if xl != "" {
		bottom = xsty.Height(xl) + gap/2
	}
	area := draw.Crop(dc, left, -legW, bottom, 0)
	p.Draw(area)
	data := p.DataCanvas(area)
	if yl != "" {
		rot := ysty
		rot.Rotation += math.Pi / 2
		dc.FillText(rot, vg.Point{X: dc.Min.X + ysty.Height(yl) - ysty.FontExtents().Descent, Y: data.Center().Y}, yl)
	}
	if xl != "" {
		dc.FillText(xsty, vg.Point{X: data.Center().X, Y: dc.Min.Y + xsty.FontExtents().Descent}, xl)
	}

	lc := dc
	lc.Min.X = dc.Max.X - legW + gap
	lc.Max.Y = data.Max.Y
	leg.Draw(lc)
	if _, err := cw.WriteTo(w); err != nil {
		return nil, err
	}
	return warns, nil
}

// Save writes c to base+".png", ".svg" and ".pdf" (Formats), all or
// nothing (atomicfile.Set), and returns the paths written and the warnings
// of Encode.
func Save(c Chart, base string) (files, warnings []string, err error) {
	var set atomicfile.Set
	defer set.Abort()
	if warnings, err = AddTo(&set, c, base); err != nil {
		return nil, nil, err
	}
	files = set.Paths()
	if err := set.Commit(); err != nil {
		return nil, nil, err
	}
	return files, warnings, nil
}

// AddTo adds c, encoded in each of Formats as base+"."+format, to set, and
// returns the warnings of Encode.
func AddTo(set *atomicfile.Set, c Chart, base string) (warnings []string, err error) {
	for _, ext := range Formats {
		path := base + "." + ext
		if err := set.Add(path, func(f io.Writer) error {
			var err error
			warnings, err = c.Encode(f, ext)
			return err
		}); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return warnings, nil
}
