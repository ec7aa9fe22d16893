package runner

import (
	"runtime/debug"
	"testing"
)

func TestDevVersion(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, "dev"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, "dev"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "2ba9e2e0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}, "dev-2ba9e2e01234"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "2ba9e2e0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}, "dev-2ba9e2e01234+modified"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "dev-abc"},
	} {
		if got := devVersion(c.settings); got != c.want {
			t.Errorf("devVersion(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}
