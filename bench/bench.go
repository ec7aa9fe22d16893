// Package bench measures wcmc's hot kernels — the Albert–Chib Gibbs sweep,
// the truncated-normal latent draws, the batched probit gradient, the
// probit special functions, SGLD and WVCMC iterations, parallel workers —
// each next to the hardware bound that limits it, measured in the same run
// and interleaved with it (a plain read of the design matrix, plain normal
// draws, a plain BLAS matrix product of the same shapes, the same
// arithmetic at the core's vector peak), so that the ratio stays meaningful
// on a busy machine. It also times the kernels over a range of sizes (N,
// d, K and S) for a log-log scaling plot.
//
// Run runs the fixed set and returns a Report; Report.Markdown writes the
// table and Report.Chart the scaling plot (see cmd/wcmc `wcmc bench` and
// docs/PERFORMANCE.md). The package's go test benchmarks time the bounds
// on their own; the kernels' own benchmarks live in model and sampler.
//
// Files: bench.go the run, its report and the machine; sizes.go the
// problem sizes; workloads.go the data and chains timed; kernels.go each
// kernel against its bound; scaling.go the scaling curves; measure.go
// timing and allocation counting; report.go the table and the plot.
package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/sampler"
)

// Config sets the size of a run. The zero value is the full set (about two
// minutes on two cores).
type Config struct {
	// Quick uses smaller problems and fewer repetitions (about 20 s);
	// the Gibbs sizes of the issue are kept.
	Quick bool
	// Reps is the number of interleaved rounds per measurement (0: 7, or
	// 3 when Quick); each result is the best round.
	Reps int
	// MinSample is the minimum duration of one timed sample (0: 100 ms,
	// or 30 ms when Quick).
	MinSample time.Duration
	// Progress, if not nil, receives one line per measurement.
	Progress io.Writer

	sizes *sizes // problem sizes; nil: by Quick (tests use tiny ones)
}

// Kernel is one measured kernel and the bound it is compared with.
type Kernel struct {
	Name string // what is timed, e.g. "Gibbs sweep"
	Size string // the problem, e.g. "N=15000 d=300"
	// Time is the best time of one operation (one sweep, one draw, one
	// gradient over S samples, …) and Rate the corresponding rate in Unit
	// (samples/s, draws/s, GFLOP/s, …).
	Time time.Duration
	Rate float64
	Unit string
	// Bound names the reference measured alongside (empty if none),
	// BoundTime its time for the same work, BoundRate its rate in Unit.
	Bound     string
	BoundTime time.Duration
	BoundRate float64
	// Ratio is Time/BoundTime (≥ 1 means slower than the bound); 0 when
	// there is no bound.
	Ratio float64
	// Target states the goal of the issue, if any, and Met whether it is
	// met.
	Target string
	Met    bool
	// Allocs is the number of heap allocations per operation (−1: not
	// measured).
	Allocs float64
	Note   string
}

// Series is one scaling curve: time per operation against a size.
type Series struct {
	Name    string    // e.g. "Gibbs sweep vs N (d = 30)"
	Short   string    // legend label, e.g. "sweep vs N (d=30)"
	Param   string    // the size varied: N, d, K or S
	X       []float64 // sizes
	Seconds []float64 // best time per operation at each size
	Slope   float64   // least-squares slope of log time on log size
}

// Report is the outcome of Run.
type Report struct {
	Start      time.Time
	Duration   time.Duration
	Quick      bool
	CPU        string
	NumCPU     int
	GOMAXPROCS int
	GoVersion  string
	GOARCH     string
	BLAS       string // the gonum BLAS implementation in use
	RowKernels string // sampler.RowKernels()
	Kernels    []Kernel
	Scaling    []Series
}

// Run measures the fixed set of kernels and the scaling series. It
// returns early with ctx's error if ctx is cancelled between measurements.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	s := cfg.sizes
	if s == nil {
		s = fullSizes(cfg.Quick)
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 7
		if cfg.Quick {
			cfg.Reps = 3
		}
	}
	if cfg.MinSample <= 0 {
		cfg.MinSample = 100 * time.Millisecond
		if cfg.Quick {
			cfg.MinSample = 30 * time.Millisecond
		}
	}
	r := &Report{
		Start:      time.Now(),
		Quick:      cfg.Quick,
		CPU:        machine.CPU(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		GOARCH:     runtime.GOARCH,
		BLAS:       machine.BLAS(),
		RowKernels: sampler.RowKernels(),
	}
	b := &suite{cfg: cfg, s: s, r: r, ctx: ctx}
	steps := []func() error{
		b.gibbs, b.latent, b.truncated, b.gradient, b.special, b.sgld, b.wvcmc, b.parallel,
		b.scaleN, b.scaleD, b.scaleS, b.scaleK,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := step(); err != nil {
			return nil, err
		}
	}
	r.Duration = time.Since(r.Start)
	return r, nil
}

type suite struct {
	cfg Config
	s   *sizes
	r   *Report
	ctx context.Context
}

func (b *suite) best(fs ...func()) []time.Duration {
	return bestOf(b.cfg.Reps, b.cfg.MinSample, fs...)
}

func (b *suite) add(k Kernel) {
	if k.BoundTime > 0 {
		k.Ratio = float64(k.Time) / float64(k.BoundTime)
	}
	b.r.Kernels = append(b.r.Kernels, k)
	if w := b.cfg.Progress; w != nil {
		fmt.Fprintf(w, "%-34s %-22s %12s %s", k.Name, k.Size, fmtRate(k.Rate), k.Unit)
		if k.Ratio > 0 {
			fmt.Fprintf(w, "  %.2f× %s", k.Ratio, k.Bound)
		}
		fmt.Fprintln(w)
	}
}

func (b *suite) addSeries(sr Series) {
	sr.Slope = logLogSlope(sr.X, sr.Seconds)
	b.r.Scaling = append(b.r.Scaling, sr)
	if w := b.cfg.Progress; w != nil {
		fmt.Fprintf(w, "scaling: %-40s slope %.2f\n", sr.Name, sr.Slope)
	}
}
