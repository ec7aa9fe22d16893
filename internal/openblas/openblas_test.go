//go:build openblas

package openblas

import (
	"strings"
	"testing"
)

// The linked library names its version and the kernels it chose.
func TestDescribeNamesTheLinkedLibrary(t *testing.T) {
	d := Implementation{}.Describe()
	if !strings.HasPrefix(d, "OpenBLAS 0.") || !strings.Contains(d, " (cgo), ") || strings.Contains(d, "unnamed kernels") {
		t.Errorf("Describe() = %q, want OpenBLAS's version and kernels", d)
	}
}
