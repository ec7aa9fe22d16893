package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"wcmc/runner"
)

func newListCmd(specs []runner.Spec) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the experiments: ID, paper figure, description",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, s := range specs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Figure, s.Description)
			}
			return tw.Flush()
		},
	}
}
