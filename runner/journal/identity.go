package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
)

// Identity describes a journaled run: what must match for a resume or a
// merge (experiment, parameters, seed, trials) and what is informative
// (version, shard, start time, what Setup reported).
type Identity struct {
	Format     int               `json:"format"`
	Experiment string            `json:"experiment"`
	XName      string            `json:"x_name"`
	Params     map[string]string `json:"params"`
	Seed       uint64            `json:"seed"`
	Trials     int               `json:"trials"`
	Quick      bool              `json:"quick"`
	Tasks      int               `json:"tasks"` // of the whole run
	Shard      runner.Shard      `json:"shard"`
	ShardTasks int               `json:"shard_tasks"`
	Version    string            `json:"version"`
	Start      time.Time         `json:"start"`
	// RunInfo is what the run's Setup reported (runner.RunInfoer),
	// written once Setup has run, before any task; absent when it reports
	// nothing.
	RunInfo map[string]map[string]any `json:"run_info,omitempty"`
	// InputDigests is the digest of the data each data-folder parameter
	// names (runner.Plan.InputDigests) when the run started: a resume or a
	// merge from another folder holding the same data matches.
	InputDigests map[string]string `json:"input_digests,omitempty"`
	// Sum is the checksum of the file, as Record.Sum is of a journal line:
	// of the file as written without it. Written last; required from
	// format 4 on, absent before.
	Sum string `json:"sum,omitempty"`
}

// IdentityOf returns the identity of shard s (of shardTasks tasks) of the
// plan's run, started at start.
func IdentityOf(p *runner.Plan, s runner.Shard, shardTasks int, start time.Time) Identity {
	return Identity{Format: Format, Experiment: p.Spec.ID, XName: p.Spec.X, Params: p.Values.Map(),
		Seed: p.Seed, Trials: p.Trials, Quick: p.Quick, Tasks: len(p.Tasks), Shard: s.Canonical(),
		ShardTasks: shardTasks, Version: runner.Version, Start: start, InputDigests: p.InputDigests()}
}

// Mismatch lists how the recorded identity differs from the plan's run in
// what determines the results: experiment, parameters (compared by value:
// "1e1" equals "10"; a data folder by the data it holds, Plan.SameSetting),
// seed and trials. The version, file format, shard and
// start time are not compared (see CheckVersions). An empty list means the
// same run.
func (id Identity) Mismatch(p *runner.Plan) []string {
	var out []string
	if id.Experiment != p.Spec.ID {
		return []string{fmt.Sprintf("experiment %s, not %s", id.Experiment, p.Spec.ID)}
	}
	if id.Seed != p.Seed {
		out = append(out, fmt.Sprintf("seed %d, not %d", id.Seed, p.Seed))
	}
	if id.Trials != p.Trials {
		out = append(out, fmt.Sprintf("trials %d, not %d", id.Trials, p.Trials))
	}
	mine := p.Values.Map()
	for _, prm := range p.Spec.Params {
		theirs, ok := id.Params[prm.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("parameter %q missing", prm.Name))
		case !p.SameSetting(prm, theirs, id.InputDigests):
			if recorded, current, ok := p.OtherData(prm, id.InputDigests); ok {
				out = append(out, fmt.Sprintf("parameter %q = %q holding data of digest %s, not %q holding data of digest %s", prm.Name, theirs, recorded, mine[prm.Name], current))
				break
			}
			out = append(out, fmt.Sprintf("parameter %q = %q, not %q", prm.Name, theirs, mine[prm.Name]))
		}
	}
	var extra []string
	for name := range id.Params {
		if _, ok := mine[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		out = append(out, fmt.Sprintf("parameter %q, which %s does not have", name, p.Spec.ID))
	}
	return out
}

// Plan rebuilds the plan of the recorded run of spec.
func (id Identity) Plan(spec runner.Spec) (*runner.Plan, error) {
	if id.Experiment != spec.ID {
		return nil, fmt.Errorf("run of %s, not %s", id.Experiment, spec.ID)
	}
	sets := runner.SetsOf(id.Params)
	for _, p := range spec.Params {
		if _, ok := id.Params[p.Name]; !ok {
			return nil, fmt.Errorf("the recorded run has no parameter %q (a run of another wcmc version, %s?)", p.Name, id.Version)
		}
	}
	if id.Trials < 1 {
		return nil, fmt.Errorf("the recorded run has %d trials", id.Trials)
	}
	plan, err := runner.NewPlan(spec, runner.Options{Seed: id.Seed, Trials: id.Trials, Sets: sets})
	if err != nil {
		return nil, fmt.Errorf("the recorded parameters: %w", err)
	}
	plan.Quick = id.Quick
	plan.Inputs = id.InputDigests // the data the run read, where it ran
	return plan, nil
}

// ReadIdentity reads an identity file.
func ReadIdentity(path string) (Identity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, err
	}
	return parseIdentity(data, path)
}

func parseIdentity(data []byte, path string) (Identity, error) {
	var id Identity
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&id); err != nil {
		return Identity{}, fmt.Errorf("%s: not a wcmc run identity: %w", path, err)
	}
	if id.Experiment == "" || id.Format < 1 {
		return Identity{}, fmt.Errorf("%s: not a wcmc run identity (no experiment or format)", path)
	}
	if err := verifyIdentitySum(data, id); err != nil {
		return Identity{}, fmt.Errorf("%s: %w", path, err)
	}
	if id.Format > Format {
		return Identity{}, fmt.Errorf("%s: journal format %d, written by a newer wcmc (%s); this wcmc (%s) reads formats 1 to %d: use the newer one",
			path, id.Format, id.Version, runner.Version, Format)
	}
	if err := id.Shard.Check(); err != nil {
		return Identity{}, fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// identitySumFormat is the first format whose identity files carry a
// checksum (Identity.Sum).
const identitySumFormat = 4

// identitySuffix is how an identity file written by encodeIdentity ends.
func identitySuffix(sum string) string { return ",\n  \"sum\": \"" + sum + "\"\n}\n" }

// encodeIdentity writes id as indented JSON ending with its checksum (from
// identitySumFormat on).
func encodeIdentity(id Identity) ([]byte, error) {
	id.Sum = ""
	data, err := json.MarshalIndent(id, "", "  ")
	if err != nil || id.Format < identitySumFormat {
		return append(data, '\n'), err
	}
	return append(data[:len(data)-2], identitySuffix(lineSum(data))...), nil
}

// verifyIdentitySum checks the checksum of a parsed identity file: present
// from identitySumFormat on, matching the content whenever present.
func verifyIdentitySum(data []byte, id Identity) error {
	if id.Sum == "" {
		if id.Format >= identitySumFormat {
			return fmt.Errorf("%w: no checksum, but the identity is of format %d, whose files have one (the file was edited)", ErrChecksum, id.Format)
		}
		return nil
	}
	suffix := identitySuffix(id.Sum)
	if !bytes.HasSuffix(data, []byte(suffix)) {
		return fmt.Errorf("%w: the \"sum\" field is not where wcmc writes it (the file was rewritten)", ErrChecksum)
	}
	body := append(slices.Clone(data[:len(data)-len(suffix)]), "\n}"...)
	if got := lineSum(body); got != id.Sum {
		return fmt.Errorf("%w: the content has checksum %s, the file says %s (edited or damaged after it was written)", ErrChecksum, got, id.Sum)
	}
	return nil
}

func writeIdentity(path string, id Identity) error {
	data, err := encodeIdentity(id)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckVersions compares the wcmc versions that computed the journaled
// runs ids (named by where) with each other and with this one
// (runner.Version), and returns nil when they agree. Results of another
// version may differ (a changed scheme, a fixed bug), and a merged or
// resumed run would hide that under this version's name, so callers refuse
// a difference unless forced, and then warn with the error's text.
func CheckVersions(ids []Identity, where []string) error {
	byVersion := map[string][]string{}
	for i, id := range ids {
		byVersion[id.Version] = append(byVersion[id.Version], where[i])
	}
	if len(byVersion) == 1 && ids[0].Version == runner.Version {
		return nil
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		parts = append(parts, fmt.Sprintf("wcmc %s (%s)", v, strings.Join(byVersion[v], ", ")))
	}
	what := "computed by " + strings.Join(parts, " and ")
	if len(byVersion) > 1 {
		return fmt.Errorf("tasks %s: another version may give other results, and one run would then mix them", what)
	}
	return fmt.Errorf("tasks %s, but this is wcmc %s: its results may differ, and the files written would record wcmc %s", what, runner.Version, runner.Version)
}
