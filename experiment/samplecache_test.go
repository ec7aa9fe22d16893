package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/runner"
)

// tinyProbitSNR is probit-snr at 3 SNR points, small enough for tests.
var tinyProbitSNR = []string{"N=400", "n_test=100", "K=4", "T=40", "ref_samples=200",
	"fresh_factor=2", "burnin=20", "snr_db=0,20,35"}

// runDraws runs keys of a probit-snr plan on a fresh Setup, with or
// without reusing the workers' draws, and returns the records and the
// run's cache.
func runDraws(t *testing.T, plan *runner.Plan, keys []runner.TaskKey, workers int, reuse bool) ([]runner.TaskResult, *sampleCache) {
	t.Helper()
	defer func(old bool) { reuseWorkerDraws = old }(reuseWorkerDraws)
	reuseWorkerDraws = reuse
	shared, err := plan.Setup()
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Execute(context.Background(), shared, keys, runner.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return res, shared.(*probitProblem).draws
}

func tinyPlan(t *testing.T, trials int) *runner.Plan {
	t.Helper()
	spec, err := Lookup("probit-snr")
	if err != nil {
		t.Fatal(err)
	}
	sets := append([]string{fmt.Sprintf("trials=%d", trials)}, tinyProbitSNR...)
	plan, err := runner.NewPlan(spec, runner.Options{Seed: 5, Quick: true, Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// sameRecord reports how two records of the same task differ: rows to the
// last bit, skips and info.
func sameRecord(a, b runner.TaskResult) error {
	if a.TaskKey != b.TaskKey {
		return fmt.Errorf("tasks %+v and %+v", a.TaskKey, b.TaskKey)
	}
	if len(a.Rows) != len(b.Rows) {
		return fmt.Errorf("%+v: %d rows, want %d", a.TaskKey, len(a.Rows), len(b.Rows))
	}
	for i, r := range a.Rows {
		w := b.Rows[i]
		if r.Scheme != w.Scheme || r.Metric != w.Metric || math.Float64bits(r.Value) != math.Float64bits(w.Value) {
			return fmt.Errorf("%+v: row %d is %s %s %v, want %s %s %v", a.TaskKey, i, r.Scheme, r.Metric, r.Value, w.Scheme, w.Metric, w.Value)
		}
	}
	if !reflect.DeepEqual(a.Skipped, b.Skipped) || !reflect.DeepEqual(a.Info, b.Info) {
		return fmt.Errorf("%+v: skips or info differ", a.TaskKey)
	}
	return nil
}

func TestReusedWorkerDrawsGiveIdenticalRecords(t *testing.T) {
	// Every task of a trial runs on the trial's stream, so its draws are
	// the same at every SNR: taking them from the point that computed
	// them must change no bit of any record, on 1 or 2 workers, and they
	// are computed once a trial.
	const trials = 2
	plan := tinyPlan(t, trials)
	want, _ := runDraws(t, plan, plan.Tasks, 1, false)
	for _, workers := range []int{1, 2} {
		got, cache := runDraws(t, plan, plan.Tasks, workers, true)
		for i := range want {
			if err := sameRecord(got[i], want[i]); err != nil {
				t.Fatalf("%d workers: %v", workers, err)
			}
		}
		if cache.computed != trials {
			t.Errorf("%d workers: draws computed %d times for %d trials", workers, cache.computed, trials)
		}
		if len(cache.entries) != 0 || cache.held != 0 {
			t.Errorf("%d workers: %d entries (%d bytes) left after every point took them", workers, len(cache.entries), cache.held)
		}
	}
	// One trial on 2 workers: the first two points start together and
	// the second waits for the first's draws.
	plan = tinyPlan(t, 1)
	if _, cache := runDraws(t, plan, plan.Tasks, 2, true); cache.computed != 1 {
		t.Errorf("one trial, 2 workers: draws computed %d times", cache.computed)
	}
}

func TestShardReusesDrawsAndLeavesThemUntouched(t *testing.T) {
	// A shard (like a resumed run) holds some points of a trial: it
	// computes on a miss, gives the records of the whole run, and keeps
	// the entries whose other points are elsewhere — which the tasks that
	// took them must not have changed.
	plan := tinyPlan(t, 3)
	want, _ := runDraws(t, plan, plan.Tasks, 1, false)
	keys, err := plan.ShardTasks(runner.Shard{Index: 1, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, cache := runDraws(t, plan, keys, 2, true)
	byKey := map[runner.TaskKey]runner.TaskResult{}
	for _, r := range want {
		byKey[r.TaskKey] = r
	}
	for _, r := range got {
		if err := sameRecord(r, byKey[r.TaskKey]); err != nil {
			t.Fatal(err)
		}
	}
	taken := map[int]int{}
	for _, k := range keys {
		taken[k.Trial]++
	}
	if cache.computed != len(taken) || len(cache.entries) != len(taken) {
		t.Fatalf("shard of trials %v: %d computations, %d entries held, want %d each", taken, cache.computed, len(cache.entries), len(taken))
	}
	defer func(old bool) { reuseWorkerDraws = old }(reuseWorkerDraws)
	reuseWorkerDraws = false
	shared, err := plan.Setup()
	if err != nil {
		t.Fatal(err)
	}
	p := shared.(*probitProblem)
	v := plan.Values.With("snr_db", "20")
	var probs problems
	c := decodeProbit(decodeSynthetic)(v, &probs)
	if err := probs.err(); err != nil {
		t.Fatal(err)
	}
	k, T, factor := c.workers.k, c.t, c.freshFactor
	for trial := range taken {
		task := runner.Task{Params: v, Trial: trial, Rng: runner.TaskRng(plan.Seed, plan.Spec.ID, trial)}
		fresh, err := p.trialDraws(task, c.workers, T, factor*T)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{src: runner.TaskRng(plan.Seed, plan.Spec.ID, trial)}
		workerStreams(rand.New(rec), k)
		e, ok := cache.entries[drawsKey(rec.words, v)]
		if !ok {
			t.Fatalf("trial %d: no entry held", trial)
		}
		for w := range k {
			if !mat.Equal(e.draws.samples[w], fresh.samples[w]) || !mat.Equal(e.draws.fresh[w], fresh.fresh[w]) {
				t.Fatalf("trial %d: worker %d's cached draws differ from a recomputation: a task changed them", trial, w+1)
			}
		}
	}
}

func TestSampleCacheComputesOncePerKey(t *testing.T) {
	c := &sampleCache{reuse: true, points: 8, maxEntry: 1 << 20, maxHeld: 1 << 20, entries: map[string]*drawsEntry{}}
	draws := &workerDraws{samples: []*mat.Dense{mat.NewDense(10, 3, nil)}} // 240 bytes
	var mu sync.Mutex
	calls := 0
	compute := func() (*workerDraws, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return draws, nil
	}
	var wg sync.WaitGroup
	for range 7 {
		wg.Go(func() {
			if d, err := c.get("a", compute); err != nil || d != draws {
				t.Errorf("got %v, %v", d, err)
			}
		})
	}
	wg.Wait()
	if calls != 1 || c.held != 240 || len(c.entries) != 1 {
		t.Fatalf("7 of 8 takers: %d computations, %d bytes in %d entries; want 1, 240, 1", calls, c.held, len(c.entries))
	}
	c.get("a", compute) // the 8th point: dropped
	if calls != 1 || c.held != 0 || len(c.entries) != 0 {
		t.Fatalf("after the last taker: %d computations, %d bytes in %d entries; want 1, 0, 0", calls, c.held, len(c.entries))
	}

	// Over the bounds: used by its takers, not kept.
	c.maxHeld = 200
	c.get("b", compute)
	c.get("b", compute)
	if calls != 3 || c.held != 0 || len(c.entries) != 0 {
		t.Fatalf("an entry over the total bound: %d computations (want 3), %d bytes in %d entries held", calls, c.held, len(c.entries))
	}
	c.maxHeld, c.maxEntry = 1<<20, 100
	c.get("c", compute)
	if calls != 4 || len(c.entries) != 0 {
		t.Fatalf("an entry over the entry bound: %d computations (want 4), %d entries held", calls, len(c.entries))
	}

	// A failed computation is not kept.
	fail := fmt.Errorf("sampler failed")
	c.maxEntry = 1 << 20
	if _, err := c.get("d", func() (*workerDraws, error) { return nil, fail }); err != fail {
		t.Fatalf("error %v, want %v", err, fail)
	}
	if len(c.entries) != 0 || c.held != 0 {
		t.Fatalf("a failed computation left %d entries, %d bytes", len(c.entries), c.held)
	}
}

func TestDrawsAreReusedOnlyAcrossSNR(t *testing.T) {
	// The sweeps over K and ζ change the draws: no reuse there.
	for id, reuse := range map[string]bool{"probit-snr": true, "probit-highdim": true,
		"probit-workers": false, "probit-heterogeneity": false} {
		spec, err := Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := runner.Resolve(spec, nil, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		if c := newSampleCache(v.XName(), len(v.XList())); c.reuse != reuse || c.points != len(v.XList()) {
			t.Errorf("%s: reuse %v over %d points, want %v over %d", id, c.reuse, c.points, reuse, len(v.XList()))
		}
	}
}
