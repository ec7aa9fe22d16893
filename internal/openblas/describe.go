package openblas

import (
	"fmt"
	"strings"
)

// describe forms Describe's line from openblas_get_config (whose first two
// words are "OpenBLAS" and the version), openblas_get_corename and
// openblas_get_num_threads.
func describe(config, core string, threads int) string {
	name := "OpenBLAS"
	if f := strings.Fields(config); len(f) >= 2 && f[0] == "OpenBLAS" {
		name += " " + f[1]
	}
	t := fmt.Sprintf("%d threads", threads)
	if threads == 1 {
		t = "1 thread"
	}
	if core = strings.TrimSpace(core); core == "" {
		core = "unnamed"
	}
	return fmt.Sprintf("%s (cgo), %s kernels, %s", name, core, t)
}
