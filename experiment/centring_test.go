package experiment

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// rowsHash is the FNV-64a hash of the rows of out with the given metrics,
// in their order: scheme, metric and the value's bits.
func rowsHash(out runner.TaskOutput, metrics ...string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, r := range out.Rows {
		if !slices.Contains(metrics, r.Metric) {
			continue
		}
		fmt.Fprintf(h, "%s/%s=", r.Scheme, r.Metric)
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(r.Value))
		h.Write(b[:])
	}
	return h.Sum64()
}

// TestCentreOffGolden: with centre=false, by default or set, one task of
// the Gaussian experiment (flat, and Rayleigh simulated physically) and of
// the probit experiment gives bit for bit the err2, err2_fresh, kl and
// kl_fresh values of every scheme as the code before the option existed
// (hashes recorded from that code, with gonum's BLAS).
func TestCentreOffGolden(t *testing.T) {
	checkPaperGolden(t, "centre=false")
}

// paperGolden are tasks of the Gaussian experiment (flat, and Rayleigh
// simulated physically) and of the probit experiment, with the hash of
// their err2, err2_fresh, kl and kl_fresh rows recorded (with gonum's BLAS)
// from the code before the models beyond the paper existed.
var paperGolden = []struct {
	id, x string
	sets  []string
	want  uint64
}{
	{"gauss-snr", "5", []string{"T=200"}, 0xa8270e0f8fe4299a},
	{"gauss-snr", "10", []string{"T=200", "fading=rayleigh", "physical=true"}, 0x74e9010139ca08b},
	{"probit-snr", "10", []string{"N=300", "n_test=50", "ref_samples=200", "T=100", "K=5", "fresh_factor=1", "lbfgs_iters=30"}, 0xd9b02edd9a02776b},
}

// checkPaperGolden checks the tasks of paperGolden at their settings and
// with off added to them.
func checkPaperGolden(t *testing.T, off ...string) {
	t.Helper()
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	for _, c := range paperGolden {
		spec, err := Lookup(c.id)
		if err != nil {
			t.Fatal(err)
		}
		for _, sets := range [][]string{c.sets, slices.Concat(c.sets, off)} {
			got := rowsHash(runTask(t, spec, c.x, sets...), "err2", "err2_fresh", "kl", "kl_fresh")
			if got != c.want {
				t.Errorf("%s at %s %v: hash %#x, want %#x", c.id, c.x, sets, got, c.want)
			}
		}
	}
}

// The centring experiments run each trial on both links from one stream:
// the paper's arm is runProbitTrial with centre off on a generator seeded
// by the task's first two draws, the centred arm the same with centre on
// (hence the same workers' samples and fresh draws), its results renamed
// scheme.Centred (no noiseless CMC), its link records prefixed; the
// centred link's blocks add up to the budget. centre=true is refused.
func TestCentringPaired(t *testing.T) {
	spec, err := Lookup("centring")
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"N=300", "n_test=50", "ref_samples=200", "T=400", "K=5", "fresh_factor=1", "lbfgs_iters=30", "snr_db=10"}
	v, _, err := runner.Resolve(spec, sets, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := spec.Setup(v, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	task := func(rng *rand.Rand) runner.Task {
		return runner.Task{Params: v, X: 10, Rng: rng, Shared: shared}
	}
	out, err := spec.Run(task(rand.New(rand.NewPCG(1, 2))))
	if err != nil {
		t.Fatal(err)
	}
	seeds := rand.New(rand.NewPCG(1, 2))
	a, b := seeds.Uint64(), seeds.Uint64()
	var p problems
	c := decodeProbit(decodeSynthetic)(v, &p)
	p2 := shared.(*probitProblem)
	var want []runner.Row
	for _, centre := range []bool{false, true} {
		c.link.channel.Centre = centre
		arm, err := runProbitTrial(c, p2, task(rand.New(rand.NewPCG(a, b))))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range arm.Rows {
			if centre {
				name, ok := centredName(r.Scheme)
				if !ok {
					if r.Scheme != SchemeNoiseless {
						t.Errorf("centred arm: %s has no centred name", r.Scheme)
					}
					continue
				}
				r.Scheme = name
			}
			want = append(want, r)
		}
	}
	if !reflect.DeepEqual(out.Rows, want) {
		t.Errorf("paired rows differ from the two arms run alone:\n%v\n%v", out.Rows, want)
	}
	seen := map[string]bool{}
	for _, r := range out.Rows {
		seen[r.Scheme] = true
	}
	for _, s := range append(slices.Clone(probitSchemes), centredSchemes...) {
		if !seen[s] {
			t.Errorf("no rows of %s", s)
		}
	}
	if seen[scheme.Centred(SchemeNoiseless)] || out.Info["centred-workers"] != nil || out.Info["workers"] == nil {
		t.Errorf("schemes %v, info keys %v", seen, slices.Sorted(maps.Keys(out.Info)))
	}
	for _, name := range []string{"centred-link-oma", "centred-link-noma"} {
		info, ok := out.Info[name]["centred"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no record of the means: %v", name, out.Info[name])
		}
		used, idle, budget := info["mean_blocks_total"].(int), info["idle_blocks"].(int), info["budget_blocks"].(int)
		s := out.Info[name]["samples_per_stream"].(int)
		k := 1
		if name == "centred-link-oma" {
			k = 5
		}
		if k*s+used+idle != k*budget {
			t.Errorf("%s: %d·%d samples + %d mean blocks + %d idle, want the budget %d·%d", name, k, s, used, idle, k, budget)
		}
	}
	if _, _, err := runner.Resolve(spec, append(sets, "centre=true"), true, 1); err == nil || !strings.Contains(err.Error(), "centre") {
		t.Errorf("centre=true on the paired experiment: %v", err)
	}
}

// centre=true on a Gaussian experiment: every scheme reports err2 and
// err2_fresh (measured on fresh signals, the closed form assuming the
// paper's link), and the results JSON records the centred links.
func TestCentreOnGaussExperiment(t *testing.T) {
	spec, err := Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	out := runTask(t, spec, "10", "T=200", "centre=true")
	got := map[string]int{}
	for _, r := range out.Rows {
		if math.IsNaN(r.Value) || r.Value < 0 {
			t.Errorf("%s %s = %v", r.Scheme, r.Metric, r.Value)
		}
		got[r.Scheme]++
	}
	for _, s := range wirelessSchemes {
		if got[s] < 2 {
			t.Errorf("%s: %d rows (skips %v)", s, got[s], out.Skipped)
		}
	}
	for _, l := range []string{"link-oma", "link-noma"} {
		if out.Info[l]["centred"] == nil {
			t.Errorf("%s: no record of the means: %v", l, out.Info[l])
		}
	}
}
