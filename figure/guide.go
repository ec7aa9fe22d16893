package figure

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
)

// Guide is a horizontal reference line at Y (Chart.Guide), e.g. the ideal
// value of the metric plotted, labelled Label in the legend.
type Guide struct {
	Y     float64
	Label string
}

// guideStyle is a thin solid black line, apart from the series' styles
// (coloured, 1.5 points wide) and the grid (light grey).
var guideStyle = draw.LineStyle{Color: color.Black, Width: pt(0.75)}

// Plot draws the line across the plot.
func (g *Guide) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	c.StrokeLine2(guideStyle, c.Min.X, trY(g.Y), c.Max.X, trY(g.Y))
}

// Thumbnail draws the legend entry: a stretch of the line.
func (g *Guide) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(guideStyle, c.Min.X, y, c.Max.X, y)
}
