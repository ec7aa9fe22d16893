package main

import (
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

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
			out := cmd.OutOrStdout()
			return printSpec(out, s, outputWidth(out))
		},
	}
}

var kindNames = map[runner.Kind]string{runner.Int: "int", runner.Float: "float", runner.String: "string", runner.Bool: "bool"}

// Headings of the two parameter lists of `wcmc show`, never wrapped (they
// fit in minWidth).
const (
	paperHeading  = "paper parameters (--set name=value):"
	beyondHeading = "beyond the paper (docs/BEYOND.md):"
)

// printSpec prints what `wcmc show` shows, wrapped to width: every
// parameter as one entry "name=default (kind, range): doc", the paper's
// first, then those marked runner.Param.Beyond under their own heading.
func printSpec(w io.Writer, s runner.Spec, width int) error {
	var lines []string
	add := func(first string, indent int, words ...string) {
		lines = append(lines, wrap(first, indent, words, width)...)
	}
	head := s.ID
	if s.Figure != "" {
		head += " (" + s.Figure + ")"
	}
	add("", 2, append([]string{head + ":"}, strings.Fields(s.Description)...)...)
	sweep := s.X
	if s.XLabel != "" {
		sweep += ", plotted as " + s.XLabel
	}
	if s.LogX {
		sweep += " on a log axis"
	}
	add("sweep:   ", 9, append(strings.Fields(sweep+" (a comma-separated list, e.g."), "--set", s.X+"="+defaultOf(s, s.X)+")")...)
	add("trials:  ", 9, strconv.Itoa(s.Trials), "(--trials N)")

	for _, section := range []struct {
		heading string
		beyond  bool
	}{{paperHeading, false}, {beyondHeading, true}} {
		first := true
		for _, p := range s.Params {
			if p.Beyond != section.beyond {
				continue
			}
			if first {
				lines = append(lines, "", section.heading)
				first = false
			}
			add("  ", 6, append(append([]string{p.Name + "=" + p.Default}, paramKind(p, s.X)...), strings.Fields(p.Doc)...)...)
		}
	}
	lines = append(lines, "")

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
		add("--quick sets: ", 14, kv...)
	}
	add("schemes: ", 9, strings.Fields(strings.Join(s.Schemes, ", "))...)
	lines = append(lines, "metrics:")
	for i, m := range s.Metrics {
		words := []string{m}
		if lbl := s.MetricLabel[m]; lbl != "" {
			words[0] += ":"
			words = append(words, strings.Fields(lbl)...)
		}
		if i == 0 {
			words = append(words, "(main: ID.png)")
		} else {
			words = append(words, "(ID."+m+".png)")
		}
		if slices.Contains(s.LinearY, m) {
			words[len(words)-1] += ","
			words = append(words, "linear", "axis")
		}
		add("  ", 4, words...)
	}
	return writeLines(w, lines)
}

// paramKind describes the values p takes, as the words "(kind, range,
// swept):": its kind, its range if it has one, and whether it is the swept
// parameter x. A range is one word: it is never broken.
func paramKind(p runner.Param, x string) []string {
	words := []string{kindNames[p.Kind]}
	if r := rangeOf(p); r != "-" && p.Kind != runner.Bool {
		words = append(words, r)
	}
	if p.Name == x {
		words = append(words, "swept")
	}
	words[0] = "(" + words[0]
	for i := range words[:len(words)-1] {
		words[i] += ","
	}
	words[len(words)-1] += "):"
	return words
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
