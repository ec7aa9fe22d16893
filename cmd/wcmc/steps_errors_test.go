package main

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/npy"
)

// stepsFixture builds a small valid pipeline in dir: shards/ (K = 2),
// samples/samples-{1,2}.npy (30×3), rx-oma/, rx-noma/ and reference.npy.
func stepsFixture(t *testing.T, dir string) {
	t.Helper()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, "partition", "--data", stepsData, "--K", "2", "--out", p("shards"))
	for _, k := range []string{"1", "2"} {
		mustRun(t, "sample", "--shard", p("shards/shard-"+k+".csv"), "--worker", k, "--S", "30", "--burnin", "5", "--out", p("samples/samples-"+k+".npy"))
	}
	mustRun(t, "transmit", "--access", "oma", "--out", p("rx-oma"), p("samples/samples-1.npy"), p("samples/samples-2.npy"))
	mustRun(t, "transmit", "--access", "noma", "--out", p("rx-noma"), p("samples/samples-1.npy"), p("samples/samples-2.npy"))
	mustRun(t, "posterior", "--data", stepsData, "--S", "50", "--burnin", "5", "--out", p("reference.npy"))
}

func writeText(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeNPY(t *testing.T, path string, r, c int, edit func(*mat.Dense)) string {
	t.Helper()
	m := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			m.Set(i, j, float64(1+i+j)/10)
		}
	}
	if edit != nil {
		edit(m)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyDir copies the files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string, skip ...string) string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
outer:
	for _, e := range entries {
		for _, s := range skip {
			if e.Name() == s {
				continue outer
			}
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, filepath.Join(dst, e.Name()), string(b))
	}
	return dst
}

// editLink rewrites the link.json in dir through edit.
func editLink(t *testing.T, dir string, edit func(*channel.Link)) string {
	t.Helper()
	path := filepath.Join(dir, channel.LinkFileName)
	var m channel.Link
	if err := readJSON(path, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	b, _ := json.Marshal(m)
	writeText(t, path, string(b))
	return dir
}

// TestStepsBadInput checks that every step rejects bad input with an
// error naming the file and the problem, and leaves no output file (nor a
// temporary one) behind.
func TestStepsBadInput(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	nan := func(m *mat.Dense) { m.Set(1, 0, math.NaN()) }
	inf := func(m *mat.Dense) { m.Set(2, 2, math.Inf(-1)) }

	cases := []struct {
		name string
		args func() []string
		want []string // substrings of the error
		out  string   // must not exist afterwards
	}{
		// partition
		{"partition: label not 0/1", func() []string {
			return []string{"partition", "--data", writeText(t, p("bad/label.csv"), "label,x\n1,0.5\n2,0.1\n0,0.3\n"), "--K", "2", "--out", p("o1")}
		}, []string{"label.csv", "line 3", "want 0 or 1"}, p("o1")},
		{"partition: NaN covariate", func() []string {
			return []string{"partition", "--data", writeText(t, p("bad/nan.csv"), "1,0.5\n0,NaN\n"), "--K", "2", "--out", p("o2")}
		}, []string{"nan.csv", "line 2", "not a finite number"}, p("o2")},
		{"partition: ragged rows", func() []string {
			return []string{"partition", "--data", writeText(t, p("bad/ragged.csv"), "1,0.5,1\n0,0.2\n"), "--K", "2", "--out", p("o3")}
		}, []string{"ragged.csv", "line 2 has 2 fields, want 3"}, p("o3")},
		{"partition: K > N", func() []string {
			return []string{"partition", "--data", writeText(t, p("bad/tiny.csv"), "1,0.5\n0,0.2\n"), "--K", "3", "--out", p("o4")}
		}, []string{"tiny.csv", "--num-workers 3 workers for 2 data points"}, p("o4")},
		{"partition: missing file", func() []string {
			return []string{"partition", "--data", p("nope.csv"), "--K", "2", "--out", p("o5")}
		}, []string{"nope.csv", "does not exist"}, p("o5")},
		{"partition: missing MNIST files", func() []string {
			return []string{"partition", "--mnist", p("bad"), "--split", "t10k", "--K", "2", "--out", p("o6")}
		}, []string{"t10k-images-idx3-ubyte"}, p("o6")},

		// sample
		{"sample: NaN in shard", func() []string {
			return []string{"sample", "--shard", writeText(t, p("bad/shard-1.csv"), "1,0.5,1\n0,inf,2\n"), "--worker", "1", "--K", "2", "--out", p("s1.npy")}
		}, []string{"shard-1.csv", "line 2, column 2", "not a finite number"}, p("s1.npy")},
		{"sample: label not 0/1", func() []string {
			return []string{"sample", "--shard", writeText(t, p("bad/shard-2.csv"), "1,0.5,1\n-1,0.1,2\n"), "--worker", "2", "--K", "2", "--out", p("s2.npy")}
		}, []string{"shard-2.csv", "want 0 or 1"}, p("s2.npy")},
		{"sample: worker outside 1…K", func() []string {
			return []string{"sample", "--shard", p("shards/shard-1.csv"), "--worker", "3", "--out", p("s3.npy")}
		}, []string{"--worker 3", "K = 2"}, p("s3.npy")},
		{"sample: K disagrees with partition.json", func() []string {
			return []string{"sample", "--shard", p("shards/shard-1.csv"), "--worker", "1", "--K", "3", "--out", p("s4.npy")}
		}, []string{"--num-workers 3 disagrees with K = 2", "partition.json"}, p("s4.npy")},
		{"sample: K unknown", func() []string {
			return []string{"sample", "--shard", writeText(t, p("lone/shard.csv"), "1,0.5\n0,0.2\n"), "--worker", "1", "--out", p("s5.npy")}
		}, []string{"--num-workers is required", "partition.json"}, p("s5.npy")},
		{"sample: S < 1", func() []string {
			return []string{"sample", "--shard", p("shards/shard-1.csv"), "--worker", "1", "--S", "0", "--out", p("s6.npy")}
		}, []string{"--samples must be ≥ 1, got 0"}, p("s6.npy")},
		{"sample: negative burn-in", func() []string {
			return []string{"sample", "--shard", p("shards/shard-1.csv"), "--worker", "1", "--burnin", "-1", "--out", p("s7.npy")}
		}, []string{"--burnin must be ≥ 0, got -1"}, p("s7.npy")},

		// transmit
		{"transmit: d mismatch between workers", func() []string {
			return []string{"transmit", "--out", p("t1"), writeNPY(t, p("dm/samples-1.npy"), 30, 3, nil), writeNPY(t, p("dm/samples-2.npy"), 30, 4, nil)}
		}, []string{"d mismatch between workers", "samples-2.npy has d = 4", "samples-1.npy has d = 3"}, p("t1")},
		{"transmit: S mismatch", func() []string {
			return []string{"transmit", "--out", p("t2"), writeNPY(t, p("sm/samples-1.npy"), 30, 3, nil), writeNPY(t, p("sm/samples-2.npy"), 20, 3, nil)}
		}, []string{"S mismatch", "samples-2.npy has 20 samples"}, p("t2")},
		{"transmit: NaN", func() []string {
			return []string{"transmit", "--out", p("t3"), p("samples/samples-1.npy"), writeNPY(t, p("nan/samples-2.npy"), 30, 3, nan)}
		}, []string{"nan/samples-2.npy", "row 2, column 1 is NaN"}, p("t3")},
		{"transmit: Inf", func() []string {
			return []string{"transmit", "--out", p("t4"), writeNPY(t, p("inf/samples-1.npy"), 30, 3, inf), p("samples/samples-2.npy")}
		}, []string{"inf/samples-1.npy", "row 3, column 3 is -Inf"}, p("t4")},
		{"transmit: missing worker", func() []string {
			return []string{"transmit", "--out", p("t5"), p("samples/samples-1.npy"), writeNPY(t, p("gap/samples-3.npy"), 30, 3, nil)}
		}, []string{"no file for worker 2", "[1 3]"}, p("t5")},
		{"transmit: not a .npy", func() []string {
			return []string{"transmit", "--out", p("t6"), writeText(t, p("txt/a.npy"), "0.1,0.2\n")}
		}, []string{"txt/a.npy", "not a .npy file"}, p("t6")},
		{"transmit: truncated .npy", func() []string {
			b, _ := os.ReadFile(p("samples/samples-2.npy"))
			return []string{"transmit", "--out", p("t7"), p("samples/samples-1.npy"), writeText(t, p("trunc/samples-2.npy"), string(b[:len(b)-5]))}
		}, []string{"trunc/samples-2.npy", "truncated data"}, p("t7")},
		{"transmit: missing file", func() []string {
			return []string{"transmit", "--out", p("t8"), p("samples/samples-1.npy"), p("samples/samples-9.npy")}
		}, []string{"no file for worker 2"}, p("t8")},
		{"transmit: file does not exist", func() []string {
			return []string{"transmit", "--out", p("t9"), p("samples/a.npy")}
		}, []string{"samples/a.npy does not exist"}, p("t9")},

		// aggregate
		{"aggregate: missing sidecar", func() []string {
			return []string{"aggregate", "--rx", copyDir(t, p("rx-noma"), p("nolink"), channel.LinkFileName), "--scheme", "wgcmc", "--out", p("a1.npy")}
		}, []string{"missing sidecar", filepath.Join("nolink", "link.json")}, p("a1.npy")},
		{"aggregate: signals disagree with sidecar", func() []string {
			rx := editLink(t, copyDir(t, p("rx-noma"), p("badS")), func(m *channel.Link) { m.S = 31 })
			return []string{"aggregate", "--rx", rx, "--scheme", "wgcmc", "--out", p("a2.npy")}
		}, []string{"badS/received.npy is 30×6", "S×m_r = 31×6"}, p("a2.npy")},
		{"aggregate: NaN in signals", func() []string {
			rx := copyDir(t, p("rx-oma"), p("nanrx"))
			writeNPY(t, filepath.Join(rx, "received-2.npy"), 30, 6, nan)
			return []string{"aggregate", "--rx", rx, "--scheme", "gcmc", "--out", p("a3.npy")}
		}, []string{"nanrx/received-2.npy", "is NaN"}, p("a3.npy")},
		{"aggregate: signal file missing", func() []string {
			return []string{"aggregate", "--rx", copyDir(t, p("rx-oma"), p("norx"), "received-2.npy"), "--scheme", "wgcmc", "--out", p("a4.npy")}
		}, []string{"norx/received-2.npy does not exist"}, p("a4.npy")},
		{"aggregate: P_k count", func() []string {
			rx := editLink(t, copyDir(t, p("rx-oma"), p("badPk")), func(m *channel.Link) { m.Pk = m.Pk[:1] })
			return []string{"aggregate", "--rx", rx, "--scheme", "wgcmc", "--out", p("a5.npy")}
		}, []string{"badPk/link.json", "P_k has 1 entries for K = 2"}, p("a5.npy")},
		{"aggregate: data d mismatch", func() []string {
			return []string{"aggregate", "--rx", p("rx-noma"), "--data", writeText(t, p("bad/d2.csv"), "1,0.5,1\n0,0.1,2\n"), "--out", p("a6.npy")}
		}, []string{"d mismatch", "d2.csv has d = 2", "d = 3"}, p("a6.npy")},
		{"aggregate: data labels", func() []string {
			return []string{"aggregate", "--rx", p("rx-noma"), "--data", writeText(t, p("bad/lab.csv"), "1,0.5,1,2\n0.5,0.1,2,3\n"), "--out", p("a7.npy")}
		}, []string{"lab.csv", "want 0 or 1"}, p("a7.npy")},
		{"aggregate: wvcmc without data", func() []string {
			return []string{"aggregate", "--rx", p("rx-noma"), "--out", p("a8.npy")}
		}, []string{"wvcmc needs the data set", "--data"}, p("a8.npy")},
		{"aggregate: gcmc over NOMA", func() []string {
			return []string{"aggregate", "--rx", p("rx-noma"), "--scheme", "gcmc", "--out", p("a9.npy")}
		}, []string{"gcmc needs one stream per worker (OMA)", "rx-noma"}, p("a9.npy")},
		{"aggregate: noiseless d mismatch", func() []string {
			return []string{"aggregate", "--scheme", "noiseless", "--out", p("a10.npy"), p("samples/samples-1.npy"), p("dm/samples-2.npy")}
		}, []string{"d mismatch between workers"}, p("a10.npy")},
		{"aggregate: unknown scheme", func() []string {
			return []string{"aggregate", "--rx", p("rx-oma"), "--scheme", "best", "--out", p("a11.npy")}
		}, []string{`--scheme "best"`}, p("a11.npy")},
		{"aggregate: not a sidecar", func() []string {
			return []string{"aggregate", "--rx", p("shards/partition.json"), "--scheme", "wgcmc", "--out", p("a12.npy")}
		}, []string{"partition.json", `format "wcmc-partition/1", want "wcmc-link/1"`}, p("a12.npy")},

		{"aggregate: signal file instead of the directory", func() []string {
			return []string{"aggregate", "--rx", p("rx-noma/received.npy"), "--scheme", "wgcmc", "--out", p("a13.npy")}
		}, []string{"received.npy is a signal file", "link.json"}, p("a13.npy")},
		{"aggregate: wvcmc flag with another scheme", func() []string {
			return []string{"aggregate", "--rx", p("rx-oma"), "--scheme", "gcmc", "--holdout", "0", "--out", p("a14.npy")}
		}, []string{"--holdout applies to --scheme wvcmc only"}, p("a14.npy")},
		{"partition: K missing", func() []string {
			return []string{"partition", "--data", stepsData, "--out", p("o7")}
		}, []string{"--num-workers is required"}, p("o7")},

		// evaluate
		{"evaluate: reference d mismatch", func() []string {
			return []string{"evaluate", "--reference", p("reference.npy"), "--allow-unconverged-reference", "--out", p("e1.csv"), p("dm/samples-2.npy")}
		}, []string{"d mismatch", "samples-2.npy has d = 4", "reference.npy has d = 3"}, p("e1.csv")},
		{"evaluate: NaN in samples", func() []string {
			return []string{"evaluate", "--reference", p("reference.npy"), "--allow-unconverged-reference", "--out", p("e2.csv"), p("samples/samples-1.npy"), p("nan/samples-2.npy")}
		}, []string{"nan/samples-2.npy", "is NaN"}, p("e2.csv")},
		{"evaluate: test set d mismatch", func() []string {
			return []string{"evaluate", "--reference", p("reference.npy"), "--test", p("bad/d2.csv"), "--out", p("e3.csv"), p("samples/samples-1.npy")}
		}, []string{"test set", "d2.csv has d = 2"}, p("e3.csv")},
		{"evaluate: reference missing", func() []string {
			return []string{"evaluate", "--reference", p("ref-nope.npy"), "--out", p("e4.csv"), p("samples/samples-1.npy")}
		}, []string{"ref-nope.npy does not exist"}, p("e4.csv")},

		// posterior
		{"posterior: label not 0/1", func() []string {
			return []string{"posterior", "--data", p("bad/lab.csv"), "--out", p("r1.npy")}
		}, []string{"lab.csv", "want 0 or 1"}, p("r1.npy")},
		{"posterior: prior variance not positive", func() []string {
			return []string{"posterior", "--data", stepsData, "--prior-var", "0", "--out", p("r2.npy")}
		}, []string{"--prior-var must be positive, got 0"}, p("r2.npy")},
	}
	for _, c := range cases {
		args := c.args()
		_, err := runSteps(args...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, err)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
		if _, serr := os.Stat(c.out); serr == nil {
			t.Errorf("%s: output %s exists after the error", c.name, c.out)
		}
	}
	assertNoTemp(t, dir)
}

// assertNoTemp fails if a temporary output file is left anywhere in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

// A write that fails half-way (here: one target name is taken by a
// directory) removes the files already written and the temporary ones.
func TestStepsWriteAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	if err := os.MkdirAll(p("out/received-2.npy"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := runSteps("transmit", "--access", "oma", "--out", p("out"), p("samples/samples-1.npy"), p("samples/samples-2.npy"))
	if err == nil {
		t.Fatal("no error")
	}
	entries, _ := os.ReadDir(p("out"))
	if len(entries) != 1 || entries[0].Name() != "received-2.npy" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("out/ holds %v after the failed write, want only the blocking directory", names)
	}

	// Directories created for a failed step are removed again.
	_, err = runSteps("partition", "--data", p("bad-missing.csv"), "--K", "2", "--out", p("new/deep/shards"))
	if err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(p("new")); err == nil {
		t.Error("partition created its output directory although it failed")
	}
	var o outputs
	if err := o.add(p("made/a/b/x.npy"), npyFile("", mat.NewDense(1, 1, nil)).write); err != nil {
		t.Fatal(err)
	}
	o.abort()
	if _, err := os.Stat(p("made")); err == nil {
		t.Error("abort left the directories it created")
	}
	assertNoTemp(t, dir)
}
