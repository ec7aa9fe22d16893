package sampler

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRunChainsProgress: for both samplers, with chains in parallel on
// several cores, the progress reports are serialised with done increasing
// to the total Σ_k (burn-in + thin·rows), a chain reporting every
// ProgressEvery transitions and after its last; the draws and statistics
// are bit-identical with and without the reports.
func TestRunChainsProgress(t *testing.T) {
	u, v := synthProbit(rand.New(rand.NewPCG(5, 5)), 150, []float64{1, -0.5, 0.25})
	const c, s, burnin, thin = 3, 40, 70, 3
	const perChain = burnin + thin*s // 190: two full reports of 64 and one of 62
	run := func(method string, report func(done, total int)) ([]*mat.Dense, []Stats) {
		rngs := make([]*rand.Rand, c)
		for i := range rngs {
			rngs[i] = rand.New(rand.NewPCG(11, uint64(i)))
		}
		dst := make([]*mat.Dense, c)
		for i := range dst {
			dst[i] = mat.NewDense(s, 3, nil)
		}
		chains, err := NewProbitChains(method, rngs, u, v, 2)
		if err != nil {
			t.Fatal(err)
		}
		st, err := RunChains(context.Background(), rngs, chains, dst, nil, burnin, thin, report)
		if err != nil {
			t.Fatal(err)
		}
		return dst, st
	}
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	for _, method := range Methods {
		var calls [][2]int
		with, stWith := run(method, func(done, total int) { calls = append(calls, [2]int{done, total}) })
		without, stWithout := run(method, nil)
		for k := range with {
			if !mat.Equal(with[k], without[k]) || stWith[k] != stWithout[k] {
				t.Errorf("%s chain %d: the progress reports changed the draws or statistics", method, k+1)
			}
		}
		if want := c * ((perChain + ProgressEvery - 1) / ProgressEvery); len(calls) != want {
			t.Errorf("%s: %d reports, want %d (every %d transitions of each of %d chains and after the last)", method, len(calls), want, ProgressEvery, c)
		}
		for i, call := range calls {
			if call[1] != c*perChain || call[0] <= 0 || (i > 0 && call[0] <= calls[i-1][0]) {
				t.Fatalf("%s: report %d is %v after %v: want done increasing, total %d", method, i, call, calls[max(i-1, 0)], c*perChain)
			}
		}
		if last := calls[len(calls)-1]; last[0] != last[1] {
			t.Errorf("%s: last report %v, want done = total", method, last)
		}
	}
}

// TestRunChainsContext: a context cancelled from the progress report stops
// every chain at its next check (at most ProgressEvery transitions later)
// with an error wrapping context.Canceled; a live context changes no draw.
func TestRunChainsContext(t *testing.T) {
	u, v := synthProbit(rand.New(rand.NewPCG(5, 5)), 150, []float64{1, -0.5, 0.25})
	const c, s, burnin = 2, 500, 50
	for _, method := range Methods {
		run := func(ctx context.Context, report func(done, total int)) ([]*mat.Dense, error) {
			rngs := []*rand.Rand{rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4))}
			dst := []*mat.Dense{mat.NewDense(s, 3, nil), mat.NewDense(s, 3, nil)}
			chains, err := NewProbitChains(method, rngs, u, v, 2)
			if err != nil {
				t.Fatal(err)
			}
			_, err = RunChains(ctx, rngs, chains, dst, nil, burnin, 1, report)
			return dst, err
		}
		base, err := run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		live, cancelLive := context.WithCancel(context.Background())
		same, err := run(live, nil)
		cancelLive()
		if err != nil || !mat.Equal(same[0], base[0]) || !mat.Equal(same[1], base[1]) {
			t.Errorf("%s: a live context changed the run (err %v)", method, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var last int
		_, err = run(ctx, func(done, total int) {
			last = done
			if done >= 2*ProgressEvery {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled run returned %v, want context.Canceled", method, err)
		}
		if total := c * (burnin + s); last >= total || last > 2*ProgressEvery+c*ProgressEvery {
			t.Errorf("%s: %d of %d transitions made after cancelling at %d", method, last, total, 2*ProgressEvery)
		}
	}
}
