package figure

import (
	"image/color"
	"os"
	"strconv"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"

	stdfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// outlinedPDF is a PDF canvas that draws text as the outlines of its
// glyphs. gonum's PDF canvas writes text in code page 1252, which has no
// minus sign, superscript exponents or Greek letters; outlines draw every
// glyph the font has, and the PDF needs no embedded font.
type outlinedPDF struct {
	*vgpdf.Canvas
	buf sfnt.Buffer
}

func newOutlinedPDF(w, h vg.Length) *outlinedPDF {
	pdfDates.Do(func() {
		if t, ok := SourceDate(os.Getenv("SOURCE_DATE_EPOCH")); ok {
			fpdf.SetDefaultCreationDate(t)
			fpdf.SetDefaultModificationDate(t)
		}
	})
	return &outlinedPDF{Canvas: vgpdf.New(w, h)}
}

// pdfDates sets the PDF dates once per process, before the first PDF
// (fpdf keeps them in a package variable).
var pdfDates sync.Once

// SourceDate parses the value of SOURCE_DATE_EPOCH, the reproducible-
// builds convention: whole seconds since 1970-01-01 UTC. When it is set
// to a valid value, every PDF records that time as its creation and
// modification date instead of the current second, so that the figures of
// identical runs are byte-identical; otherwise (unset, or not a
// non-negative integer) ok is false and PDFs carry the time they were
// written.
func SourceDate(v string) (t time.Time, ok bool) {
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// straightAlpha is a colour whose RGBA method returns its components
// without premultiplying them by alpha. gonum's PDF canvas takes RGBA's
// components as the colour and sets the alpha apart, so a translucent
// colour would come out darkened (a band of alpha 40/255 nearly grey).
type straightAlpha color.NRGBA

func (s straightAlpha) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// SetColor sets the colour of what is drawn next, translucent ones
// included (see straightAlpha).
func (c *outlinedPDF) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straightAlpha(color.NRGBAModel.Convert(clr).(color.NRGBA)))
}

// FillString fills the outlines of str's glyphs, set in fnt with its
// baseline starting at pt, advancing by each glyph's width and the font's
// kerning.
func (c *outlinedPDF) FillString(fnt font.Face, pt vg.Point, str string) {
	f := fnt.Face
	if f == nil || fnt.Font.Size == 0 {
		return
	}
	ppem := fixed.Int26_6(float64(fnt.Font.Size) * 64) // one "pixel" per point
	unit := func(v fixed.Int26_6) vg.Length { return vg.Length(v) / 64 }
	x := pt.X
	var prev sfnt.GlyphIndex
	for i, r := range str {
		idx, err := f.GlyphIndex(&c.buf, r)
		if err != nil {
			continue
		}
		if i > 0 {
			if k, err := f.Kern(&c.buf, prev, idx, ppem, stdfont.HintingNone); err == nil {
				x += unit(k)
			}
		}
		prev = idx
		segs, err := f.LoadGlyph(&c.buf, idx, ppem, nil)
		if err == nil && len(segs) > 0 {
			// Glyph coordinates grow downwards from the baseline.
			at := func(p fixed.Point26_6) vg.Point { return vg.Point{X: x + unit(p.X), Y: pt.Y - unit(p.Y)} }
			var path vg.Path
			for _, s := range segs {
				switch s.Op {
				case sfnt.SegmentOpMoveTo:
					if len(path) > 0 {
						path.Close()
					}
					path.Move(at(s.Args[0]))
				case sfnt.SegmentOpLineTo:
					path.Line(at(s.Args[0]))
				case sfnt.SegmentOpQuadTo:
					path.QuadTo(at(s.Args[0]), at(s.Args[1]))
				case sfnt.SegmentOpCubeTo:
					path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
				}
			}
			path.Close()
			c.Fill(path)
		}
		if adv, err := f.GlyphAdvance(&c.buf, idx, ppem, stdfont.HintingNone); err == nil {
			x += unit(adv)
		}
	}
}
