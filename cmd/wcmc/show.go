package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/runner"
)

func newShowCmd(specs []runner.Spec) *cobra.Command {
	return &cobra.Command{
		Use:               "show ID",
		Short:             "Show an experiment's parameters, sweep, schemes and metrics",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(specs),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := runner.Find(specs, args[0])
			if err != nil {
				return err
			}
			return printSpec(cmd.OutOrStdout(), s)
		},
	}
}

var kindNames = map[runner.Kind]string{runner.Int: "int", runner.Float: "float", runner.String: "string", runner.Bool: "bool"}

// printSpec prints what `wcmc show` shows.
func printSpec(w io.Writer, s runner.Spec) error {
	fmt.Fprintf(w, "%s", s.ID)
	if s.Figure != "" {
		fmt.Fprintf(w, " (%s)", s.Figure)
	}
	fmt.Fprintf(w, ": %s\n", s.Description)
	sweep := s.X
	if s.XLabel != "" {
		sweep += ", plotted as " + s.XLabel
	}
	if s.LogX {
		sweep += " on a log axis"
	}
	fmt.Fprintf(w, "sweep:   %s (a comma-separated list, e.g. --set %s=%s)\n", sweep, s.X, defaultOf(s, s.X))
	fmt.Fprintf(w, "trials:  %d (--trials N)\n\n", s.Trials)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARAMETER\tKIND\tDEFAULT\tRANGE\tDOC")
	for _, p := range s.Params {
		name := p.Name
		if name == s.X {
			name += " (swept)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, kindNames[p.Kind], p.Default, rangeOf(p), p.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(s.Quick) > 0 {
		keys := make([]string, 0, len(s.Quick))
		for k := range s.Quick {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+s.Quick[k])
		}
		fmt.Fprintf(w, "\n--quick sets: %s\n", strings.Join(kv, " "))
	} else {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "schemes: %s\n", strings.Join(s.Schemes, ", "))
	fmt.Fprintln(w, "metrics:")
	for i, m := range s.Metrics {
		line := "  " + m
		if lbl := s.MetricLabel[m]; lbl != "" {
			line += ": " + lbl
		}
		if i == 0 {
			line += " (main: ID.png)"
		} else {
			line += " (ID." + m + ".png)"
		}
		if slices.Contains(s.LinearY, m) {
			line += ", linear axis"
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

func defaultOf(s runner.Spec, name string) string {
	for _, p := range s.Params {
		if p.Name == name {
			return p.Default
		}
	}
	return ""
}

// rangeOf describes the accepted values of p.
func rangeOf(p runner.Param) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case len(p.Choices) > 0:
		return strings.Join(p.Choices, "|")
	case p.Kind == runner.Bool:
		return "true|false"
	case p.Positive:
		return "> 0"
	case p.HasMin && p.HasMax:
		return "[" + f(p.Min) + ", " + f(p.Max) + "]"
	case p.HasMin:
		return "≥ " + f(p.Min)
	case p.HasMax:
		return "≤ " + f(p.Max)
	}
	return "-"
}
