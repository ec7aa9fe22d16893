package reproduce

import (
	"os"
	"path/filepath"
	"strings"
)

// Placeholders stand, in what a report shows (its command line and
// settings), for paths that would only name the layout of the machine it
// was made on (see ShownPath).
const (
	OutPlaceholder     = "OUT_DIR"
	MNISTPlaceholder   = "MNIST_DIR"
	ProfilePlaceholder = "PROFILE_DIR"
	DocPlaceholder     = "FILE"
)

// ShownPath returns path as a report shows it, as a user in the working
// directory wd (the root of a checkout, typically) would type it: a
// relative path as given; an absolute one relative to wd when it lies in
// wd or beside it, one level up (as ../shared/data/mnist, the project's
// data folder); any other absolute path, which would only describe this
// machine, as placeholder. Separators are slashes.
func ShownPath(path, wd, placeholder string) string {
	if path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		return filepath.ToSlash(filepath.Clean(path))
	}
	if wd != "" && filepath.IsAbs(wd) {
		if rel, err := filepath.Rel(wd, path); err == nil {
			rel = filepath.ToSlash(rel)
			up := strings.TrimPrefix(rel, "../")
			if rel != ".." && up != ".." && !strings.HasPrefix(up, "../") {
				return rel
			}
		}
	}
	return placeholder
}

// workDir is the working directory ("" when it cannot be read: every
// absolute path is then shown as its placeholder).
func workDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// Shown returns path as the report shows it from this process's working
// directory (ShownPath).
func Shown(path, placeholder string) string {
	return ShownPath(path, workDir(), placeholder)
}

// shownMNISTDir is the MNIST folder as the settings line shows it: a
// folder in the Go module cache as $GOMODCACHE/…, any other as Shown.
func shownMNISTDir(dir, modCache string) string {
	if modCache != "" && filepath.IsAbs(dir) {
		if rel, err := filepath.Rel(modCache, dir); err == nil && rel != ".." && !strings.HasPrefix(filepath.ToSlash(rel), "../") {
			return "$GOMODCACHE/" + filepath.ToSlash(rel)
		}
	}
	return Shown(dir, MNISTPlaceholder)
}
