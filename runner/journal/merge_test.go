package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

// shardDirs runs every shard of count in its own directory.
func shardDirs(t *testing.T, spec runner.Spec, opts runner.Options, count int) []string {
	t.Helper()
	var dirs []string
	for i := range count {
		o := Options{Options: opts, Dir: t.TempDir()}
		o.Shard = runner.Shard{Index: i, Count: count}
		mustRun(t, spec, o)
		dirs = append(dirs, o.Dir)
	}
	return dirs
}

func TestMergeRefusals(t *testing.T) {
	spec := sweeptest.Noise()
	specs := []runner.Spec{spec, sweeptest.Walk()}
	opts := runner.Options{Seed: 3, Trials: 4, Workers: 2, Sets: []string{"n=2"}}
	dirs := shardDirs(t, spec, opts, 3)
	if _, err := Merge(specs, dirs, MergeOptions{}); err != nil {
		t.Fatalf("good shards: %v", err)
	}

	other := func(mod func(*runner.Options)) string {
		o := Options{Options: opts, Dir: t.TempDir()}
		mod(&o.Options)
		o.Shard = runner.Shard{Index: 2, Count: 3}
		mustRun(t, spec, o)
		return o.Dir
	}
	seed := other(func(o *runner.Options) { o.Seed = 4 })
	param := other(func(o *runner.Options) { o.Sets = []string{"n=3"} })
	trials := other(func(o *runner.Options) { o.Trials = 5 })
	sweep := other(func(o *runner.Options) { o.Sets = []string{"n=2", "x=1,2,8"} })
	walk := t.TempDir()
	mustRun(t, sweeptest.Walk(), Options{Options: runner.Options{Trials: 1}, Dir: walk})
	empty := t.TempDir()

	// A shard whose journal stops early (a killed process not resumed).
	partial := shardDirs(t, spec, opts, 3)
	lines := journalLines(t, partial[1], "noise")
	os.WriteFile(Path(partial[1], "noise"), []byte(strings.Join(lines[:2], "")), 0o644)
	// A journal whose last line is torn: ignored, its task missing.
	torn := shardDirs(t, spec, opts, 3)
	lines = journalLines(t, torn[0], "noise")
	os.WriteFile(Path(torn[0], "noise"), []byte(strings.Join(lines[:len(lines)-2], "")+lines[len(lines)-2][:30]), 0o644)
	// A record moved into the wrong shard's journal.
	moved := shardDirs(t, spec, opts, 3)
	l0 := journalLines(t, moved[0], "noise")
	f, _ := os.OpenFile(Path(moved[1], "noise"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(l0[0])
	f.Close()
	// The same shard run twice, and a 2-way sharding next to a 3-way one.
	twice := shardDirs(t, spec, opts, 3)
	two := shardDirs(t, spec, opts, 2)

	cases := []struct {
		name string
		dirs []string
		id   string
		want []string
	}{
		{"seed", []string{dirs[0], dirs[1], seed}, "", []string{"shards disagree", seed, dirs[0], "seed 4, not 3"}},
		{"param", []string{dirs[0], dirs[1], param}, "", []string{"shards disagree", param, `parameter "n" = "3", not "2"`}},
		{"trials", []string{dirs[0], dirs[1], trials}, "", []string{"shards disagree", trials, "trials 5, not 4"}},
		{"sweep", []string{dirs[0], dirs[1], sweep}, "", []string{"shards disagree", `parameter "x"`}},
		{"experiments", []string{dirs[0], walk}, "", []string{"noise, walk", "name the one"}},
		{"wrong experiment", []string{dirs[0], walk}, "walk", []string{dirs[0], "no walk.run.json"}},
		{"unknown experiment", []string{walk}, "nope", []string{`unknown experiment "nope"`}},
		{"no journal", []string{dirs[0], empty}, "", []string{empty, "no journaled run"}},
		{"missing shard", dirs[:2], "", []string{"4 of 12 tasks are missing", "shard 2/3 (4 tasks): no directory given", "x=1 trial 2", "x=4 trials 0,3"}},
		{"partial shard", partial, "", []string{"2 of 12 tasks are missing: x=", "shard 1/3 in " + partial[1] + " lacks 2 tasks", "--resume"}},
		{"torn", torn, "", []string{"1 of 12 tasks are missing", "shard 0/3 in " + torn[0]}},
		{"moved record", moved, "", []string{Path(moved[1], "noise"), "is in shard 0/3, not in this directory's shard 1/3"}},
		{"overlap", []string{twice[0], dirs[0], dirs[1], dirs[2]}, "", []string{"overlap", twice[0] + " and " + dirs[0] + " both hold 4 tasks", "x=1 trials 0,3"}},
		{"mixed counts", []string{two[0], two[1], dirs[0]}, "", []string{"overlap"}},
		{"twice", []string{dirs[0], dirs[1], dirs[0]}, "", []string{"given twice"}},
		{"not a dir", []string{Path(dirs[0], "noise")}, "", []string{"not a directory"}},
		{"none", nil, "", []string{"no shard directories"}},
	}
	for _, c := range cases {
		_, err := Merge(specs, c.dirs, MergeOptions{Experiment: c.id})
		if err == nil {
			t.Errorf("%s: merged", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q should mention %q", c.name, err, w)
			}
		}
	}

	// An identity file that is not one, and one of a run whose parameters
	// the spec no longer has.
	bad := shardDirs(t, spec, opts, 1)[0]
	os.WriteFile(IdentityPath(bad, "noise"), []byte(`{"experiment":"noise"`), 0o644)
	if _, err := Merge(specs, []string{bad}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "not a wcmc run identity") {
		t.Errorf("bad identity: %v", err)
	}
	old := shardDirs(t, spec, opts, 1)[0]
	setIdentity(t, old, `"scale"`, `"scale_old"`)
	if _, err := Merge(specs, []string{old}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), `no parameter "scale"`) {
		t.Errorf("old identity: %v", err)
	}
}

// TestMergeVerifiesContent: a journal line with a row deleted or a value
// edited, or stripped of its checksum, is refused (they merged before
// journal lines had checksums: n = 11 instead of 12 in the summary); a
// format-1 journal, whose lines have no checksum, still merges; shards of
// another wcmc version are refused, or merged with a warning under Force.
func TestMergeVerifiesContent(t *testing.T) {
	spec := sweeptest.Noise()
	specs := []runner.Spec{spec}
	opts := runner.Options{Seed: 3, Trials: 4, Workers: 2, Sets: []string{"n=2"}}
	want, err := Merge(specs, shardDirs(t, spec, opts, 2), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// edited returns fresh shards with line 2 of shard 1 edited.
	edited := func(edit func(string) string) []string {
		dirs := shardDirs(t, spec, opts, 2)
		lines := journalLines(t, dirs[1], "noise")
		lines[1] = edit(lines[1])
		os.WriteFile(Path(dirs[1], "noise"), []byte(strings.Join(lines, "")), 0o644)
		return dirs
	}
	firstRow := regexp.MustCompile(`\{"scheme":"[^"]*","metric":"[^"]*","value":[^}]*\},`)
	value := regexp.MustCompile(`"value":[-0-9.e]+`)
	sum := regexp.MustCompile(`,"sum":"[0-9a-f]+"\}`)
	for name, c := range map[string]struct {
		edit func(string) string
		want []string
	}{
		"row deleted":  {func(l string) string { return firstRow.ReplaceAllString(l, "") }, []string{"journal line 2", "checksum mismatch"}},
		"value edited": {func(l string) string { return value.ReplaceAllString(l, `"value":0.5`) }, []string{"journal line 2", "checksum mismatch"}},
		"sum removed":  {func(l string) string { return sum.ReplaceAllString(l, "}") }, []string{"record 2: no checksum", fmt.Sprint("format ", Format)}},
	} {
		dirs := edited(c.edit)
		_, err := Merge(specs, dirs, MergeOptions{})
		if err == nil {
			t.Errorf("%s: merged", name)
			continue
		}
		for _, w := range append(c.want, Path(dirs[1], "noise")) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q should mention %q", name, err, w)
			}
		}
	}

	// A format-1 journal (written before checksums) merges as before.
	dirs := shardDirs(t, spec, opts, 2)
	for _, d := range dirs {
		data, _ := os.ReadFile(Path(d, "noise"))
		os.WriteFile(Path(d, "noise"), sum.ReplaceAll(data, []byte("}")), 0o644)
		setIdentity(t, d, fmt.Sprintf(`"format": %d`, Format), `"format": 1`)
	}
	got, err := Merge(specs, dirs, MergeOptions{})
	if err != nil {
		t.Fatalf("format-1 journals: %v", err)
	}
	sameResult(t, got, want)

	// Shards of another version.
	dirs = shardDirs(t, spec, opts, 2)
	setIdentity(t, dirs[0], `"version": "`+runner.Version+`"`, `"version": "v0.9"`)
	_, err = Merge(specs, dirs, MergeOptions{})
	for _, w := range []string{"wcmc v0.9 (" + dirs[0] + ")", "wcmc " + runner.Version + " (" + dirs[1] + ")", "mix", "force"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("mixed versions: error %v should mention %q", err, w)
		}
	}
	var warn strings.Builder
	got, err = Merge(specs, dirs, MergeOptions{Force: true, Warn: &warn})
	if err != nil || !strings.Contains(warn.String(), "warning: merging anyway") {
		t.Fatalf("forced: %v, warning %q", err, warn.String())
	}
	sameResult(t, got, want)
	setIdentity(t, dirs[1], `"version": "`+runner.Version+`"`, `"version": "v0.9"`)
	if _, err := Merge(specs, dirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "but this is wcmc "+runner.Version) {
		t.Errorf("shards of one other version: %v", err)
	}
}

// setIdentity replaces old by new in the identity file of noise in dir,
// as a wcmc writing that identity would have written it (its checksum
// recomputed, or absent below format 4): an identity of another format or
// version, not a hand-edited one (see editIdentity).
func setIdentity(t *testing.T, dir, old, new string) {
	t.Helper()
	edited := editIdentity(t, dir, old, new)
	var id Identity
	if err := json.Unmarshal(edited, &id); err != nil {
		t.Fatal(err)
	}
	data, err := encodeIdentity(id)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(IdentityPath(dir, "noise"), data, 0o644)
}

// editIdentity replaces old by new in the identity file of noise in dir,
// as a hand edit, and returns the new content.
func editIdentity(t *testing.T, dir, old, new string) []byte {
	t.Helper()
	data, err := os.ReadFile(IdentityPath(dir, "noise"))
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("identity in %s: %v, no %s in\n%s", dir, err, old, data)
	}
	edited := []byte(strings.Replace(string(data), old, new, 1))
	os.WriteFile(IdentityPath(dir, "noise"), edited, 0o644)
	return edited
}

func TestEditedIdentityIsRefused(t *testing.T) {
	spec := sweeptest.Noise()
	specs := []runner.Spec{spec}
	opts := runner.Options{Seed: 1, Trials: 3, Workers: 1}

	// Relabelled: seed 7 in both shards' identities.
	dirs := shardDirs(t, spec, opts, 2)
	for _, d := range dirs {
		editIdentity(t, d, `"seed": 1,`, `"seed": 7,`)
	}
	if _, err := Merge(specs, dirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("seed edited in the identities: merge error %v, want a checksum mismatch", err)
	}

	// A parameter edited, and the run resumed with the edited value.
	dir := t.TempDir()
	ro := Options{Options: runner.Options{Seed: 1, Trials: 3, Workers: 1, Sets: []string{"n=3"}}, Dir: dir}
	interrupt(t, spec, ro, 2)
	editIdentity(t, dir, `"n": "3"`, `"n": "4"`)
	ro.Resume, ro.Sets = true, []string{"n=4"}
	if _, err := Run(context.Background(), spec, ro); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("parameter edited in the identity: resume error %v, want a checksum mismatch", err)
	}

	// The format lowered to 1 and the identity's checksum deleted, to let a
	// line without its checksum through.
	dirs = shardDirs(t, spec, opts, 2)
	sum := regexp.MustCompile(`,\n  "sum": "[0-9a-f]+"`)
	data, _ := os.ReadFile(IdentityPath(dirs[1], "noise"))
	data = sum.ReplaceAll(data, nil)
	data = []byte(strings.Replace(string(data), fmt.Sprintf(`"format": %d`, Format), `"format": 1`, 1))
	os.WriteFile(IdentityPath(dirs[1], "noise"), data, 0o644)
	lines := journalLines(t, dirs[1], "noise")
	lines[1] = regexp.MustCompile(`,"sum":"[0-9a-f]+"\}`).ReplaceAllString(lines[1], "}")
	lines[1] = regexp.MustCompile(`"value":[-0-9.e]+`).ReplaceAllString(lines[1], `"value":0.5`)
	os.WriteFile(Path(dirs[1], "noise"), []byte(strings.Join(lines, "")), 0o644)
	if _, err := Merge(specs, dirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "the identity was edited") {
		t.Errorf("format lowered to 1: merge error %v, want one saying the identity was edited", err)
	}
}
