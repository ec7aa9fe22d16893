package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// InlineSVG returns the <svg> element of an SVG document, ready to inline
// in HTML: the XML prolog and anything before the root element are
// dropped. It checks that the document is well-formed XML whose root is
// svg, and refuses active or external content: script or foreignObject
// elements, on* event attributes, and links (href) other than to
// fragments within the document.
func InlineSVG(doc []byte) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	depth := 0
	start := int64(-1)
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed SVG: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if start >= 0 {
					return nil, errors.New("more than one root element")
				}
				if t.Name.Local != "svg" {
					return nil, fmt.Errorf("root element is <%s>, not <svg>", t.Name.Local)
				}
				start = off
			}
			name := strings.ToLower(t.Name.Local)
			if name == "script" || name == "foreignobject" {
				return nil, fmt.Errorf("refusing <%s> element", t.Name.Local)
			}
			for _, a := range t.Attr {
				an := strings.ToLower(a.Name.Local)
				if strings.HasPrefix(an, "on") {
					return nil, fmt.Errorf("refusing event attribute %s", a.Name.Local)
				}
				if an == "href" && !strings.HasPrefix(strings.TrimSpace(a.Value), "#") {
					return nil, fmt.Errorf("refusing external link %q", a.Value)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("text outside the root element")
			}
		}
	}
	if start < 0 {
		return nil, errors.New("no <svg> element")
	}
	return bytes.TrimSpace(doc[start:]), nil
}
