package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// checkOut validates --out before any work: given, it must not be empty;
// dir says whether it names a directory (created now) or a file or base
// name (whose directory must exist). It is a no-op when --out was not
// given and out is empty (the command's default applies).
func checkOut(cmd *cobra.Command, out string, dir bool) error {
	if out == "" {
		if cmd.Flags().Changed("out") {
			return errEmptyOut
		}
		return nil
	}
	if !dir {
		d := filepath.Dir(out)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return fmt.Errorf("writing --out %s: %s is not an existing directory; nothing was done", out, d)
		}
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out %s: cannot create the directory: %w; nothing was done", out, err)
	}
	return nil
}
