//go:build openblas

package model_test

import (
	"strings"

	"gonum.org/v1/gonum/blas"

	"github.com/wcmc-project/wcmc/internal/openblas"
)

// fastBLAS is the BLAS UseFastBLAS installs with the openblas tag,
// OpenBLAS, and a check of the machine line's name for it.
func fastBLAS() (blas.Float64, func(string) bool) {
	return openblas.Implementation{}, func(line string) bool { return strings.HasPrefix(line, "OpenBLAS ") }
}
