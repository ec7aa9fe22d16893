package model

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestRowKernelsUnderGODEBUG re-runs the vector-against-generic tests in a
// child process under each GODEBUG setting that changes which CPU features
// Go uses (and so which branch math.Exp takes): the kernels must then
// either stay bit-identical to the generic loops or step aside.
func TestRowKernelsUnderGODEBUG(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the vector kernels are amd64 only")
	}
	if os.Getenv("WCMC_CHILD_GODEBUG") != "" {
		t.Skip("already the child")
	}
	for _, debug := range []string{"cpu.avx=off", "cpu.fma=off", "cpu.avx2=off", "cpu.avx512f=off"} {
		cmd := exec.Command(os.Args[0], "-test.run=^(TestRowFunctionsVectorGeneric|TestRowFunctionsTail|TestRowFunctionsFiniteSum|TestCDFRowVectorGeneric)$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GODEBUG="+debug, "WCMC_CHILD_GODEBUG=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GODEBUG=%s: %v\n%s", debug, err, out)
		}
	}
}
