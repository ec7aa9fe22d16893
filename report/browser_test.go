package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium (Debian's
// chromium, or $WCMC_CHROMIUM), or "" when there is none.
func chromium() string {
	if p := os.Getenv("WCMC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The report renders in a real browser: headless Chromium screenshots
// report.html, the screenshot is a page of text and figures (not blank),
// and the browser logs no console message (the page has no script, so
// any message is an error: a refused element, a parse failure). Skipped
// without Chromium unless WCMC_REQUIRE_BROWSER is set.
func TestReportRendersInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the report in Chromium (-short)")
	}
	bin := chromium()
	if bin == "" {
		if os.Getenv("WCMC_REQUIRE_BROWSER") != "" {
			t.Fatal("WCMC_REQUIRE_BROWSER is set but no chromium is installed (apt-get install chromium)")
		}
		t.Skip("no chromium: install Debian's chromium to check report.html in a browser")
	}
	src, runs := quickRuns(t)
	dir := t.TempDir()
	if _, err := Write(dir, New(src, testMeta, runs)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	const w, h = 1280, 2400
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1280,2400",
		"file://"+filepath.Join(dir, HTMLFile))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot %v, want %d×%d", b, w, h)
	}
	// Not blank: a page of text, badges and figures has many dark pixels
	// and several colours.
	dark, colours := inked(img)
	t.Logf("%.4f of the pixels dark, %d colours", float64(dark)/float64(w*h), colours)
	if frac := float64(dark) / float64(w*h); frac < 0.01 || colours < 20 {
		t.Errorf("the screenshot looks blank: %.4f of its pixels dark, %d colours", frac, colours)
	}
}

// inked counts the dark pixels of img and its distinct colours (to 4 bits
// per channel).
func inked(img image.Image) (dark, colours int) {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0x8000 {
				dark++
			}
			seen[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
		}
	}
	return dark, len(seen)
}
