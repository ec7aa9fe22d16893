package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/runner"
)

// buildInfo is what the binary knows of its build: the module version,
// the VCS revision, time and state when stamped, and the Go toolchain.
type buildInfo struct {
	module, revision, time string
	modified, stamped      bool
	goVersion              string
}

func readBuildInfo() buildInfo {
	b := buildInfo{goVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.module = info.Main.Path + " " + info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision, b.stamped = s.Value, true
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// versionLine is what --version prints: the wcmc version (runner.Version,
// the one recorded in results), the commit when the build recorded it,
// and the toolchain and platform.
func versionLine() string {
	b := readBuildInfo()
	s := "wcmc " + runner.Version
	switch {
	case !b.stamped:
		s += " (no commit recorded)"
	case !strings.Contains(runner.Version, short(b.revision)): // a release version
		s += " (commit " + short(b.revision)
		if b.modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + fmt.Sprintf(", %s %s/%s", b.goVersion, runtime.GOOS, runtime.GOARCH)
}

// paperURL is the paper's arXiv page.
const paperURL = "https://arxiv.org/abs/2103.01351"

func short(rev string) string { return rev[:min(12, len(rev))] }

// writeVersion prints the long version: versionLine, the module and the
// build's VCS facts, and for a build that recorded none, why that matters
// (stored results are matched on the version) and how to record it.
func writeVersion(w io.Writer) error {
	b := readBuildInfo()
	var lines []string
	lines = append(lines, versionLine())
	if b.module != "" {
		lines = append(lines, "module:   "+b.module)
	}
	if b.stamped {
		c := "commit:   " + b.revision
		if b.time != "" {
			c += " (" + b.time + ")"
		}
		if b.modified {
			c += ", with uncommitted changes"
		}
		lines = append(lines, c)
	} else {
		lines = append(lines,
			"commit:   not recorded: built by 'go run', with -buildvcs=false (GOFLAGS), or outside a git checkout",
			"          'go build -buildvcs=true -o wcmc ./cmd/wcmc' in the checkout records it; results then carry",
			"          the commit, and 'wcmc reproduce' reuses stored results only from the same code")
	}
	if runner.VersionTracksCode() {
		lines = append(lines, "results:  stored results are reused only when computed by this version")
	} else {
		lines = append(lines, fmt.Sprintf("results:  recorded as version %q, which does not change with the code", runner.Version))
	}
	lines = append(lines, "paper:    Liu & Simeone, \"Channel-Driven Monte Carlo Sampling for Bayesian Distributed Learning in Wireless Data Centers\", "+paperURL)
	_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
	return err
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the wcmc version, its commit and how it was built",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout())
		},
	}
}
