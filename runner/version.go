package runner

import (
	"runtime/debug"
	"strings"
)

// Version is the wcmc version recorded in every run's JSON and compared
// before stored results are reused. A release sets it at build time with
// -ldflags "-X github.com/wcmc-project/wcmc/runner.Version=…". Otherwise it is "dev", refined by
// init to "dev-<commit>" when the binary carries its git revision (go build
// in a checkout stamps it; go run does not), with "+modified" when the
// tree had uncommitted changes.
var Version = "dev"

func init() {
	if Version != "dev" {
		return
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		Version = devVersion(info.Settings)
	}
}

// devVersion is "dev", "dev-<first 12 hex of vcs.revision>" and
// "+modified" when vcs.modified is true.
func devVersion(settings []debug.BuildSetting) string {
	var rev string
	modified := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev-" + rev[:min(12, len(rev))]
	if modified {
		v += "+modified"
	}
	return v
}

// VersionTracksCode reports whether Version changes whenever the code
// does: false for "dev" and for a build from a modified tree, whose stored
// results a changed build would still take for its own.
func VersionTracksCode() bool {
	return Version != "dev" && !strings.HasSuffix(Version, "+modified")
}
