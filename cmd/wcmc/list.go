package main

import (
	"io"
	"strings"
	"unicode/utf8"

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
			out := cmd.OutOrStdout()
			return printList(out, reproduce.FigureOrder(specs), outputWidth(out))
		},
	}
}

// minDescWidth is the narrowest description column of `wcmc list`; with
// less room each description goes under its ID instead.
const minDescWidth = 30

// printList prints what `wcmc list` shows: one experiment per entry, ID
// and figure in aligned columns, the description wrapped to width with a
// hanging indent at its column.
func printList(w io.Writer, specs []runner.Spec, width int) error {
	idW, figW := 0, 0
	for _, s := range specs {
		idW = max(idW, utf8.RuneCountInString(s.ID))
		figW = max(figW, utf8.RuneCountInString(s.Figure))
	}
	col := idW + 2 + figW + 2
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)) }
	for _, s := range specs {
		head := pad(s.ID, idW+2) + pad(s.Figure, figW+2)
		var lines []string
		if width-col >= minDescWidth {
			lines = wrap(head, col, strings.Fields(s.Description), width)
		} else {
			lines = append([]string{strings.TrimRight(head, " ")}, wrap("    ", 4, strings.Fields(s.Description), width)...)
		}
		if err := writeLines(w, lines); err != nil {
			return err
		}
	}
	return nil
}
