package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wcmc-project/wcmc/runner"
)

// newRootCmd returns the wcmc command over the given experiments, with
// every subcommand listed here.
func newRootCmd(specs []runner.Spec, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "wcmc",
		Short: "Channel-driven Monte Carlo sampling over wireless channels: the paper's experiments",
		Long: `wcmc reproduces the experiments of Liu & Simeone, "Channel-Driven Monte Carlo
Sampling for Bayesian Distributed Learning in Wireless Data Centers".

  wcmc list            the experiments, in the paper's figure order
  wcmc show ID         an experiment's parameters, schemes and metrics
  wcmc run ID          run a sweep, writing CSV, JSON and figures
                       (--resume after an interruption; --shard i/n, then wcmc merge)
  wcmc reproduce       every experiment and the paper's claims in one report

The protocol on your own data, one step per command (files in between):
  wcmc partition → sample (per worker) → transmit → aggregate; posterior, evaluate
  wcmc plot trace|rank, wcmc export: a sample file's chains as figures, or as
  InferenceData (zarr) for ArviZ

Shell completion (experiment IDs, --set names and values): wcmc completion --help`,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().BoolP("quiet", "q", false, "print no progress or notes on stderr (results, warnings and errors still print)")
	root.AddCommand(
		// the paper's experiments
		newListCmd(specs),
		newShowCmd(specs),
		newRunCmd(specs),
		newMergeCmd(specs),
		newReproduceCmd(specs),
		// the protocol on your own data, one step per command
		newPartitionCmd(),
		newSampleCmd(),
		newTransmitCmd(),
		newAggregateCmd(),
		newPosteriorCmd(),
		newEvaluateCmd(),
		newPlotCmd(),
		newExportCmd(),
		// the tool itself
		newBenchCmd(),
		newVersionCmd(),
	)
	root.SetFlagErrorFunc(suggestFlag)
	root.SetGlobalNormalizationFunc(renamedFlags)
	return root
}

// renamed maps the flags' former spellings to their names: the old ones
// keep working, unlisted in help, so that scripts written for them run.
var renamed = map[string]string{
	"K": "num-workers", // number of workers K (partition, sample)
	"S": "samples",     // samples kept per chain (sample, posterior)
}

// renamedFlags is the flag-name normalisation of every command: a former
// spelling (see renamed) stands for its flag.
func renamedFlags(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := renamed[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// unknownFlag matches pflag's errors for an unknown flag.
var unknownFlag = regexp.MustCompile(`^unknown flag: --([^\s=]+)$|^unknown shorthand flag: '(.)' in -`)

// suggestFlag adds to an unknown-flag error the command's flags closest to
// the one typed ("--quik": did you mean --quick?), and says where the
// command's flags are listed.
func suggestFlag(cmd *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	typed := m[1]
	if typed == "" {
		typed = m[2]
	}
	var hint []string
	for _, s := range runner.Suggest(typed, names) {
		hint = append(hint, "--"+s)
		if len(hint) == 3 {
			break
		}
	}
	msg := err.Error()
	if len(hint) > 0 {
		msg += "; did you mean " + strings.Join(hint, " or ") + "?"
	}
	return fmt.Errorf("%s\n(see '%s --help' for its flags)", msg, cmd.CommandPath())
}

// quiet reports whether --quiet was given.
func quiet(cmd *cobra.Command) bool {
	q, _ := cmd.Flags().GetBool("quiet")
	return q
}

// progressOut returns where a command's progress and notes go: stderr, or
// nowhere with --quiet.
func progressOut(cmd *cobra.Command) io.Writer {
	if quiet(cmd) {
		return io.Discard
	}
	return cmd.ErrOrStderr()
}

// execute runs the wcmc command with args and returns the exit status,
// printing any error to stderr. On a terminal, progress is one line
// updated in place (see progressWriter).
func execute(ctx context.Context, specs []runner.Spec, args []string, stdout, stderr io.Writer) int {
	errOut := progressWriter(stderr)
	root := newRootCmd(specs, stdout, errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if s, ok := errOut.(*statusWriter); ok {
		s.Status("")
	}
	if err != nil {
		fmt.Fprintln(stderr, "wcmc:", err)
		return 1
	}
	return 0
}

// completeIDs offers experiment IDs for shell completion.
func completeIDs(specs []runner.Spec) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, len(specs))
		for i, s := range specs {
			out[i] = cobra.CompletionWithDesc(s.ID, s.Description)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSets offers --set completions: "name=" for the parameters of
// the experiments (args[0] of run, or every experiment), then the values
// of the named one (its choices, true/false, or its default).
func completeSets(specs []runner.Spec) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		scope := specs
		if len(args) > 0 {
			if s, err := runner.Find(specs, args[0]); err == nil {
				scope = []runner.Spec{s}
			}
		}
		name, _, hasValue := strings.Cut(typed, "=")
		var out []cobra.Completion
		seen := map[string]bool{}
		for _, s := range scope {
			for _, p := range s.Params {
				if seen[p.Name] || (hasValue && p.Name != name) {
					continue
				}
				seen[p.Name] = true
				if !hasValue {
					out = append(out, cobra.CompletionWithDesc(p.Name+"=", p.Doc))
					continue
				}
				values := p.Choices
				if p.Kind == runner.Bool {
					values = []string{"true", "false"}
				}
				if len(values) == 0 {
					values = []string{p.Default}
				}
				for _, v := range values {
					out = append(out, cobra.CompletionWithDesc(p.Name+"="+v, p.Doc))
				}
			}
		}
		if !hasValue {
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeList offers a comma-separated list of values: those not yet in
// the list typed so far, after it.
func completeList(values func() []cobra.Completion) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done := ""
		have := map[string]bool{}
		if i := strings.LastIndex(typed, ","); i >= 0 {
			done = typed[:i+1]
			for _, v := range strings.Split(typed[:i], ",") {
				have[v] = true
			}
		}
		var out []cobra.Completion
		for _, v := range values() {
			if id, _, _ := strings.Cut(v, "\t"); !have[id] {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeWords offers fixed values.
func completeWords(words ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp)
}
