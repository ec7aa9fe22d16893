package figure

// The ceiling of a chart (Chart.Ceiling): values above it drawn at it,
// the dashed line that marks it and the arrows of the clipped points; and
// the bar that draws a band of one point.

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// capped returns v, or the chart's ceiling when v lies above it.
func (c Chart) capped(v float64) float64 {
	if c.Ceiling > 0 && v > c.Ceiling {
		return c.Ceiling
	}
	return v
}

// ceilingMargin is the room left above the ceiling for its arrows, as a
// fraction of the y axis's span (of its decades on a log axis).
const ceilingMargin = 0.07

// setCeiling ends the y axis a little above ceiling, which the values
// drawn reach.
func setCeiling(a *plot.Axis, ceiling float64) {
	if _, log := a.Scale.(plot.LogScale); log {
		a.Max = ceiling * math.Pow(ceiling/a.Min, ceilingMargin)
		return
	}
	a.Max = ceiling + ceilingMargin*(ceiling-a.Min)
}

// bar draws a band of one point: a translucent vertical bar from its
// lower edge (the axis, for one at or below zero on a log axis) to its
// upper edge.
func (c Chart) bar(p *plot.Plot, b band, col color.NRGBA) (*plotter.Line, error) {
	lo, hi := b.lo[0], b.hi[0]
	if c.LogY && lo.Y <= 0 {
		lo.Y = p.Y.Min
	}
	l, err := plotter.NewLine(plotter.XYs{lo, hi})
	if err != nil {
		return nil, err
	}
	l.LineStyle = draw.LineStyle{Color: color.NRGBA{R: col.R, G: col.G, B: col.B, A: 70}, Width: pt(7)}
	return l, nil
}

// arrowStyle is the glyph of a point drawn at the ceiling, in col.
func arrowStyle(col color.NRGBA) draw.GlyphStyle {
	return draw.GlyphStyle{Color: col, Shape: arrowGlyph{}, Radius: pt(3)}
}

// arrowGlyph is an upward arrow whose tail is at the point: a value that
// lies above the ceiling it is drawn at.
type arrowGlyph struct{}

func (arrowGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, at vg.Point) {
	r := sty.Radius
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: pt(1.5)}, at.X, at.Y, at.X, at.Y+1.6*r)
	var head vg.Path
	head.Move(vg.Point{X: at.X, Y: at.Y + 3*r})
	head.Line(vg.Point{X: at.X - r, Y: at.Y + 1.4*r})
	head.Line(vg.Point{X: at.X + r, Y: at.Y + 1.4*r})
	head.Close()
	c.Fill(head)
}

// arrowThumb is the legend entry of the arrows, centred in its box.
type arrowThumb struct{ sty draw.GlyphStyle }

func (a arrowThumb) Thumbnail(c *draw.Canvas) {
	at := c.Center()
	at.Y -= 1.5 * a.sty.Radius
	c.DrawGlyphNoClip(a.sty, at)
}

// ceilingLine is the dashed grey line across the plot at the ceiling.
type ceilingLine float64

func (y ceilingLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 110}, Width: pt(0.8), Dashes: []vg.Length{pt(4), pt(3)}}
	c.StrokeLine2(sty, c.Min.X, trY(float64(y)), c.Max.X, trY(float64(y)))
}
