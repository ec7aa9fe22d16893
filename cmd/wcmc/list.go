package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/reproduce"
	"github.com/wcmc-project/wcmc/runner"
)

func newListCmd(specs []runner.Spec) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the experiments in the paper's figure order: ID, figure, description",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, s := range reproduce.FigureOrder(specs) {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Figure, s.Description)
			}
			return tw.Flush()
		},
	}
}
