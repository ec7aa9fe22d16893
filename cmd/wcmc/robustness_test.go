package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLIRobustness runs the binary robustnessCases times on generated bad
// input: truncated or garbled .npy files, CSVs and JSON sidecars, and flag
// values that are negative, huge, NaN, empty, or paths through a symlink
// out of the case's folder, over every subcommand that `wcmc --help` lists
// and the flags its --help lists. The seed is fixed, so the cases are the
// same on every run. A case fails on a panic (a Go stack trace, or exit 2
// from the runtime), a hang (robustnessTimeout), or a file written outside
// its --out and temporary folders.
const (
	robustnessCases   = 120
	robustnessTimeout = 20 * time.Second
)

// robustnessKnown are the case numbers that fail on bugs already being
// fixed elsewhere; each is skipped, naming its command line.
var robustnessKnown = map[int]string{}

func TestCLIRobustness(t *testing.T) {
	bin := faultBuild(t)
	cmds := robustnessCommands(t, bin)
	rng := rand.New(rand.NewPCG(16, 2024))
	type job struct {
		n    int
		args []string
		root string
	}
	var jobs []job
	for n := range robustnessCases {
		root := t.TempDir()
		args := robustnessArgs(t, rng, root, cmds)
		jobs = append(jobs, job{n, args, root})
	}
	sem := make(chan struct{}, 2)
	for _, j := range jobs {
		t.Run(fmt.Sprint(j.n), func(t *testing.T) {
			if why, ok := robustnessKnown[j.n]; ok {
				t.Skip(why)
			}
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			robustnessCase(t, bin, j.root, j.args)
		})
	}
}

// robustnessCase runs one command line in root/work, with TMPDIR root/tmp.
func robustnessCase(t *testing.T, bin, root string, args []string) {
	ctx, cancel := context.WithTimeout(context.Background(), robustnessTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(root, "work")
	cmd.Env = append(faultEnv(), "TMPDIR="+filepath.Join(root, "tmp"), "WCMC_MAX_MEMORY=512M", "HOME="+filepath.Join(root, "tmp"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	line := "wcmc " + strings.Join(args, " ")
	if ctx.Err() != nil {
		t.Fatalf("%s: no answer within %s (hang)\n%s", line, robustnessTimeout, tail(out.String()))
	}
	code := cmd.ProcessState.ExitCode()
	if s := out.String(); code == 2 || strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
		t.Errorf("%s: exit %d (%v), panic or runtime error:\n%s", line, code, err, tail(s))
	}
	for _, d := range []string{"work", "outside", "in"} {
		filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && !robustnessInput[filepath.Base(p)] {
				t.Errorf("%s: wrote %s, outside its --out", line, p)
			}
			return nil
		})
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

// robustnessCommands returns each subcommand's flags (name → type), from
// the binary's --help.
func robustnessCommands(t *testing.T, bin string) map[string]map[string]string {
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	_, list, _ := strings.Cut(string(help), "Available Commands:")
	list, _, _ = strings.Cut(list, "\n\n")
	flagRE := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([\w-]+)(?: (\w+))?`)
	cmds := map[string]map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
		name := strings.Fields(l)[0]
		if name == "help" || name == "completion" {
			continue
		}
		h, _ := exec.Command(bin, name, "--help").CombinedOutput()
		flags := map[string]string{}
		for _, m := range flagRE.FindAllStringSubmatch(string(h), -1) {
			if m[1] != "help" {
				flags[m[1]] = m[2]
			}
		}
		cmds[name] = flags
	}
	if len(cmds) < 10 {
		t.Fatalf("found only %d subcommands in wcmc --help:\n%s", len(cmds), help)
	}
	return cmds
}

// robustnessInput names the files the generator writes (not outputs).
var robustnessInput = map[string]bool{}

func init() {
	for _, n := range []string{"trunc.npy", "garbled.npy", "hugeshape.npy", "nan.npy", "ok.npy", "empty.npy",
		"bad.csv", "nan.csv", "ragged.csv", "empty.csv", "ok.csv", "bad.json", "partition.json", "run.json", "sentinel", "escape"} {
		robustnessInput[n] = true
	}
}

// npyBytes is a float64 .npy file of the given shape header and values.
func npyBytes(shape string, vals []float64) []byte {
	h := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape)
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	binary.Write(&b, binary.LittleEndian, vals)
	return b.Bytes()
}

// robustnessArgs writes a case's bad inputs under root/in and returns a
// random command line over them; root/outside is reachable only through
// the symlink root/in/escape.
func robustnessArgs(t *testing.T, rng *rand.Rand, root string, cmds map[string]map[string]string) []string {
	for _, d := range []string{"in", "work", "tmp", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(root, "in")
	vals := make([]float64, 40)
	for i := range vals {
		vals[i] = rng.NormFloat64()
	}
	ok := npyBytes("(20, 2)", vals)
	garbled := bytes.Clone(ok)
	for range 8 {
		garbled[rng.IntN(len(garbled))] = byte(rng.IntN(256))
	}
	nan := npyBytes("(20, 2)", append([]float64{math.NaN(), math.Inf(1)}, vals[2:]...))
	files := map[string][]byte{
		"ok.npy":         ok,
		"trunc.npy":      ok[:rng.IntN(len(ok))],
		"garbled.npy":    garbled,
		"hugeshape.npy":  npyBytes("(4000000000000, 3000000)", vals),
		"nan.npy":        nan,
		"empty.npy":      nil,
		"ok.csv":         []byte("1,0.5,0.2\n-1,0.1,0.3\n1,2,3\n-1,-1,0\n"),
		"bad.csv":        []byte("label,x\n\"unterminated,1\n\xff\xfe,2\n"),
		"nan.csv":        []byte("1,NaN,Inf\n-1,1e400,-0\n"),
		"ragged.csv":     []byte("1,2,3\n4\n5,6,7,8,9\n"),
		"empty.csv":      nil,
		"bad.json":       []byte(`{"k": [1, 2, `),
		"partition.json": []byte(`{"K": -3, "N": 1e300, "files": null, "d": "x"}`),
		"run.json":       []byte(`{"experiment": "../../etc", "trials": -1, "seed": NaN}`),
	}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(in, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(in, "sentinel"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(in, "escape")); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sortStrings(names)
	file := func() string { return filepath.Join(in, names[rng.IntN(len(names))]) }
	out := filepath.Join(root, "tmp", "out")
	cmdNames := make([]string, 0, len(cmds))
	for n := range cmds {
		cmdNames = append(cmdNames, n)
	}
	sortStrings(cmdNames)
	name := cmdNames[rng.IntN(len(cmdNames))]
	args := []string{name}
	switch name {
	case "run", "show":
		args = append(args, []string{"gauss-snr", "probit-snr", "nope", ""}[rng.IntN(4)])
	case "plot", "export", "evaluate", "aggregate", "transmit", "merge", "posterior", "partition":
		for range 1 + rng.IntN(3) {
			args = append(args, file())
		}
	}
	bad := []string{"-1", "-9223372036854775808", "1e308", "NaN", "Inf", "", "99999999999999999999999", "0", "0x10", "1/0"}
	flags := cmds[name]
	fnames := make([]string, 0, len(flags))
	for f := range flags {
		fnames = append(fnames, f)
	}
	sortStrings(fnames)
	outGiven := false
	for range 1 + rng.IntN(4) {
		if len(fnames) == 0 {
			break
		}
		f := fnames[rng.IntN(len(fnames))]
		switch typ := flags[f]; {
		case typ == "":
			args = append(args, "--"+f)
		case f == "out":
			outGiven = true
			args = append(args, "--out", []string{filepath.Join(in, "escape"), filepath.Join(in, "escape", "x"), filepath.Join(in, "ok.npy"), "", out}[rng.IntN(5)])
		case typ == "string" || typ == "strings" || typ == "stringArray":
			v := []string{file(), filepath.Join(in, "escape", "y.npy"), "", "K=NaN", "K=-1", "snr=1e308", bad[rng.IntN(len(bad))]}[rng.IntN(7)]
			args = append(args, "--"+f, v)
		default:
			args = append(args, "--"+f, bad[rng.IntN(len(bad))])
		}
	}
	if !outGiven && flags["out"] != "" {
		args = append(args, "--out", out)
	}
	// A run or reproduce must not be a real sweep: a bad value is always given.
	if name == "run" || name == "reproduce" || name == "bench" {
		args = append(args, "--trials", bad[rng.IntN(4)])
	}
	return args
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
