package experiment

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/runner"
)

// Reusing the workers' draws across sweep points. Every point's task of
// trial t runs on the same stream (runner.TaskRng(seed, id, t)), so the
// data partition and the workers' chains of trial t, drawn on streams
// split off it (workerStreams), are the same at every point of a sweep
// whose swept parameter they do not read. The first task of the trial
// computes them and the others take them; the trial's stream advances
// exactly as when they are computed, so every later draw (channel, fresh
// signals) and every result is unchanged.

// drawsFreeSweeps are the swept parameters that the partition and the
// workers' chains never read: only there do points share draws. It is an
// allow-list, so that a parameter added later can only cost a recomputation,
// never a wrong reuse; snr_db is read by the channel alone (linkConfig).
var drawsFreeSweeps = map[string]bool{"snr_db": true}

// reuseWorkerDraws is a test hook: false computes the draws in every task,
// as before the cache existed.
var reuseWorkerDraws = true

// Bounds of the memory the cache holds. An entry larger than
// maxEntryBytes is used by the tasks already waiting for it and not kept
// (probit-highdim: K = 20 workers × (T + 2T) rows × d = 300 ≈ 1.4 GB a
// trial); a new entry that would take the total past maxHeldBytes is not
// kept either. Tasks run point by point, so a full probit-snr or mnist-snr
// run holds one entry per trial until its last point (40 × 8.8 MB and
// 40 × 13 MB at the paper's sizes).
const (
	maxEntryBytes = 256 << 20
	maxHeldBytes  = 1 << 30
)

// workerDraws is what the workers of one trial produce before anything is
// transmitted: n samples per worker (rows; OMA sends the first ⌊T/K⌋),
// nFresh more from the same chains, per worker its chains' views of its
// samples (interleaved), and the chains' diagnostics. Shared between
// tasks: read-only (the channel and the diagnostics only read them,
// channel.Ideal copies).
type workerDraws struct {
	samples, fresh []*mat.Dense
	chains         [][]*mat.Dense
	diag           map[string]any
}

// size is the bytes of the sample matrices.
func (d *workerDraws) size() int64 {
	var n int64
	for _, ms := range [][]*mat.Dense{d.samples, d.fresh} {
		for _, m := range ms {
			r, c := m.Dims()
			n += int64(r) * int64(c) * 8
		}
	}
	return n
}

// sampleCache holds the workers' draws of the trials in flight of one run
// (it lives in the run's Setup state). Each entry is computed once
// (concurrent takers wait) and dropped once every sweep point has taken
// it. Tasks that never come (a shard, a resumed run) leave entries behind,
// bounded by maxHeldBytes and freed with the run.
type sampleCache struct {
	reuse  bool // the swept parameter is in drawsFreeSweeps
	points int  // sweep points of the run: the takers of each entry

	maxEntry, maxHeld int64

	mu       sync.Mutex
	entries  map[string]*drawsEntry
	held     int64 // bytes of the kept entries
	computed int   // computations, for tests
}

type drawsEntry struct {
	once  sync.Once
	draws *workerDraws
	err   error
	size  int64
	kept  bool
	takes int
}

// newSampleCache returns the cache of a run that sweeps x over points
// points.
func newSampleCache(x string, points int) *sampleCache {
	return &sampleCache{
		reuse:    drawsFreeSweeps[x],
		points:   points,
		maxEntry: maxEntryBytes,
		maxHeld:  maxHeldBytes,
		entries:  map[string]*drawsEntry{},
	}
}

// get returns the draws of key, calling compute for the first taker only.
// A failed computation is not kept (every taker waiting on it gets the
// error; a later one computes again).
func (c *sampleCache) get(key string, compute func() (*workerDraws, error)) (*workerDraws, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		e = &drawsEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()

	e.once.Do(func() {
		// Stays if compute panics: the waiters get an error, not nil.
		e.err = errors.New("workers' draws: the task computing them failed")
		e.draws, e.err = compute()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.computed++
		if e.err == nil {
			e.size = e.draws.size()
			e.kept = e.size <= c.maxEntry && c.held+e.size <= c.maxHeld
		}
		if e.kept {
			c.held += e.size
		} else if c.entries[key] == e {
			delete(c.entries, key)
		}
	})

	c.mu.Lock()
	defer c.mu.Unlock()
	e.takes++
	if e.takes >= c.points && c.entries[key] == e {
		delete(c.entries, key)
		if e.kept {
			c.held -= e.size
		}
	}
	return e.draws, e.err
}

// recorder is a random source that forwards to src and records every word
// drawn: the seeds of the streams split off a task's stream, which are
// what the draws depend on.
type recorder struct {
	src   *rand.Rand
	words []uint64
}

func (r *recorder) Uint64() uint64 {
	w := r.src.Uint64()
	r.words = append(r.words, w)
	return w
}

// drawsKey names the draws of a task: the seed words of its partition and
// chain streams and every parameter value except the swept one (the cache
// is used only when the swept parameter is not read, drawsFreeSweeps).
func drawsKey(words []uint64, v runner.Values) string {
	var b strings.Builder
	buf := make([]byte, 0, 8*len(words))
	for _, w := range words {
		buf = binary.LittleEndian.AppendUint64(buf, w)
	}
	b.Write(buf)
	for _, name := range v.Names() {
		if name == v.XName() {
			continue
		}
		b.WriteString("\x00" + name + "=" + v.Raw(name))
	}
	return b.String()
}

// trialDraws splits the partition and the workers' streams off t.Rng
// (workerStreams) and returns the workers' draws on them: n samples and
// nFresh fresh ones per worker (workerSamples) with their diagnostics,
// taken from the run's cache when another point of the trial computed
// them. t.Rng advances the same either way.
func (p *probitProblem) trialDraws(t runner.Task, w workerConfig, n, nFresh int) (*workerDraws, error) {
	rec := &recorder{src: t.Rng}
	partRng, streams := workerStreams(rand.New(rec), w.k)
	compute := func() (*workerDraws, error) {
		draws, err := p.workerSamples(w, partRng, streams, n, nFresh)
		if err != nil {
			return nil, err
		}
		if draws.diag, err = workerDiagnostics(draws.chains); err != nil {
			return nil, err
		}
		return draws, nil
	}
	c := p.draws
	if c == nil || !c.reuse || !reuseWorkerDraws {
		return compute()
	}
	return c.get(drawsKey(rec.words, t.Params), compute)
}
