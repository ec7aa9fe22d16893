package deploy_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestScriptsPassShellcheck runs shellcheck on the recipes' shell scripts
// (deploy/*.sh), as on the manifests' inline scripts; under CI a missing
// shellcheck fails the test.
func TestScriptsPassShellcheck(t *testing.T) {
	scripts, err := filepath.Glob("*.sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no deploy/*.sh script found")
	}
	requireShellcheck(t)
	for _, s := range scripts {
		if out, err := exec.Command("shellcheck", s).CombinedOutput(); err != nil {
			t.Errorf("%s: shellcheck: %v\n%s", s, err, out)
		}
	}
}
