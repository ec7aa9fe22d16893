// Command taskprof times one task of one experiment, stage by stage: the
// shared setup (data and reference posterior) and one (point, trial) task,
// each with its wall and CPU time, and a CPU profile of both whose samples
// are attributed to the stages of a trial (worker sampling, each WVCMC
// optimiser by access and protocol, the Gaussian schemes, the channel,
// applying the maps, the metrics). It is the regeneration command of the
// time table in docs/PERFORMANCE.md:
//
//	go run ./bench/taskprof -exp probit-snr -set snr_db=20 -set protocols=paper,converged,default
//
// Parameters are set as with `wcmc run --set`. -points picks sweep points
// (indices, or all) and -trials the trials of each, run one after the
// other with the seeds of a run with --seed 0. -cpuprofile keeps the profile for
// `go tool pprof`. The stages are those of internal/stageprof, as in
// `wcmc reproduce --profile`.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/internal/stageprof"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
)

// printRows is the -rows flag.
var printRows bool

type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	model.UseFastBLAS()
	var (
		id      = flag.String("exp", "probit-snr", "experiment ID")
		quick   = flag.Bool("quick", false, "apply the experiment's quick settings")
		points  = flag.String("points", "0", "sweep points to run: comma-separated indices, or all")
		trials  = flag.Int("trials", 1, "trials per point (run one after the other)")
		rows    = flag.Bool("rows", false, "print every result row (scheme, metric, value to the last bit)")
		profile = flag.String("cpuprofile", "", "write the CPU profile here (default: a temporary file, removed)")
		setSets sets
	)
	flag.Var(&setSets, "set", "name=value parameter (repeatable)")
	flag.Parse()
	printRows = *rows
	if err := run(*id, *quick, *points, *trials, *profile, setSets); err != nil {
		fmt.Fprintln(os.Stderr, "taskprof:", err)
		os.Exit(1)
	}
}

func run(id string, quick bool, points string, trials int, profile string, sets []string) error {
	spec, err := experiment.Lookup(id)
	if err != nil {
		return err
	}
	v, _, err := runner.Resolve(spec, sets, quick, 1)
	if err != nil {
		return err
	}
	xs := v.XList()
	var idx []int
	if points == "all" || spec.Trajectory {
		for i := range xs {
			idx = append(idx, i)
		}
	} else {
		for _, f := range strings.Split(points, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= len(xs) {
				return fmt.Errorf("point %q: want an index below %d", f, len(xs))
			}
			idx = append(idx, i)
		}
	}
	if spec.Trajectory {
		idx = idx[:1] // one call runs every checkpoint
	}
	if trials < 1 {
		return fmt.Errorf("trials %d: want at least 1", trials)
	}
	keep := profile != ""
	if !keep {
		f, err := os.CreateTemp("", "taskprof-*.pprof")
		if err != nil {
			return err
		}
		profile = f.Name()
		f.Close()
		defer os.Remove(profile)
	}
	f, err := os.Create(profile)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	ctx := context.Background()

	var shared any
	var setupErr error
	w0, c0 := time.Now(), cpu()
	pprof.Do(ctx, pprof.Labels("stage", "setup"), func(context.Context) {
		if spec.Setup != nil {
			shared, setupErr = spec.Setup(v, runner.SetupRng(0, spec.StreamID()))
		}
	})
	setupWall, setupCPU := time.Since(w0), cpu()-c0
	if setupErr != nil {
		pprof.StopCPUProfile()
		return fmt.Errorf("setup: %w", setupErr)
	}

	fmt.Printf("experiment %s, seed 0, GOMAXPROCS=%d, settings: %s\n", spec.ID, runtime.GOMAXPROCS(0), strings.Join(sets, " "))
	fmt.Printf("setup (data, reference posterior): wall %s, CPU %s\n", round(setupWall), round(setupCPU))
	var totalWall, totalCPU time.Duration
	var out runner.TaskOutput
	for _, point := range idx {
		for trial := range trials {
			task := runner.Task{Params: v, X: xs[point], Point: point, Trial: trial, Shared: shared, Ctx: ctx}
			where := fmt.Sprintf("%s = %s", v.XName(), runner.FormatX(xs[point]))
			if spec.Trajectory {
				task.X = math.NaN()
				task.Rng = runner.TaskRng(0, spec.StreamID(), trial)
				where = "trajectory " + v.Raw(v.XName())
			} else {
				task.Params = v.With(v.XName(), runner.FormatX(xs[point]))
				task.Rng = runner.TaskRng(0, spec.StreamID(), trial)
			}
			var runErr error
			w0, c0 := time.Now(), cpu()
			pprof.Do(ctx, pprof.Labels("stage", "task"), func(context.Context) {
				out, runErr = spec.Run(task)
			})
			wall, used := time.Since(w0), cpu()-c0
			if runErr != nil {
				pprof.StopCPUProfile()
				return fmt.Errorf("task %s trial %d: %w", where, trial, runErr)
			}
			totalWall += wall
			totalCPU += used
			fmt.Printf("task %s, trial %d: wall %s, CPU %s\n", where, trial, round(wall), round(used))
			if trials == 1 {
				fits(out)
			}
			if printRows {
				for _, r := range out.Rows {
					fmt.Printf("row %s %s %s %v\n", where, r.Scheme, r.Metric, strconv.FormatFloat(r.Value, 'g', -1, 64))
				}
			}
		}
	}
	pprof.StopCPUProfile()
	f.Close()
	n := time.Duration(len(idx) * trials)
	fmt.Printf("tasks: %d, wall %s (%s each), CPU %s (%s each)\n", len(idx)*trials, round(totalWall), round(totalWall/n), round(totalCPU), round(totalCPU/n))
	return attribute(profile)
}

// fits prints each WVCMC run's iterations, evaluations and status.
func fits(out runner.TaskOutput) {
	names := make([]string, 0, len(out.Info))
	for n, info := range out.Info {
		if _, ok := info["iterations"]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		info := out.Info[n]
		fmt.Printf("  %-24s %-12v iterations %-6v evaluations %-6v status %-18v rel_grad_norm %v\n",
			n, info["optimizer"], info["iterations"], info["evaluations"], info["status"], info["rel_grad_norm"])
	}
	for _, s := range out.Skipped {
		fmt.Printf("  skipped %s: %s\n", s.Scheme, s.Reason)
	}
}

// stages maps a function of the call stack to a stage; the outermost
// attribute reads the CPU profile and prints its CPU time by stage
// (internal/stageprof).
func attribute(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := stageprof.Read(f)
	if err != nil {
		return err
	}
	if t.Total == 0 {
		return fmt.Errorf("the profile has no samples")
	}
	return t.WriteText(os.Stdout)
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }

// cpu is the process's user plus system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
