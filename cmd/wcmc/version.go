package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"wcmc/runner"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the wcmc version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "wcmc %s (%s %s/%s)\n", runner.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
