package bench

// sizes are the problem sizes of a run.
type sizes struct {
	gibbs               []gibbsCase
	gradN, gradD, gradS int
	latentN             int // (N, d = 5) chain whose margins feed the latent draws
	scaleN              []int
	scaleND             int
	scaleD              []int
	scaleDN             int
	scaleS              []int
	scaleSN, scaleSD    int
	scaleK              []int
	scaleKShard         int
	scaleKSamples       int
	sgldN, sgldBatch    int
	wvcmc               []wvcmcCase
	specialN            int // margins in a row of the special-function rows
	parN, parK, parS    int
	truncA              []float64
	normalDraws         int
	burnin              int
}

// wvcmcCase is one size of the WVCMC objective row: N data rows of
// dimension d, K workers sending S samples each.
type wvcmcCase struct{ n, d, s, k int }

type gibbsCase struct {
	n, d    int
	target  string
	ok      func(k Kernel) bool
	float32 bool // also time the float32 sweep (sampler.NewGibbsFloat32)
}

func fullSizes(quick bool) *sizes {
	s := &sizes{
		gibbs: []gibbsCase{
			{8500, 5, "≥ 10,000 samples/s", func(k Kernel) bool { return k.Rate >= 10000 }, false},
			{12665, 30, "", nil, false},
			{15000, 300, "≤ 1.5× the read of U", func(k Kernel) bool { return k.Ratio <= 1.5 }, true},
		},
		gradN: 15000, gradD: 300, gradS: 1000,
		latentN: 8500,
		scaleN:  []int{1000, 2000, 4000, 8000, 16000, 32000, 64000}, scaleND: 30,
		scaleD: []int{5, 10, 20, 40, 80, 160, 320}, scaleDN: 4000,
		scaleS: []int{10, 30, 100, 300, 1000, 3000}, scaleSN: 4000, scaleSD: 50,
		scaleK: []int{1, 2, 4, 8, 16, 32}, scaleKShard: 425, scaleKSamples: 200,
		sgldN: 8500, sgldBatch: 85,
		// probit-snr (Fig. 5), the MNIST experiments (Figs. 10–11) and
		// probit-highdim (Fig. 8; there S = T = 10000).
		wvcmc: []wvcmcCase{{8500, 5, 1000, 20}, {12665, 30, 500, 10}, {15000, 300, 1000, 20}},
		parN:  8500, parK: 20, parS: 500,
		specialN:    4096,
		truncA:      []float64{-1, -0.25, 0, 0.1, 1, 40},
		normalDraws: 8500,
		burnin:      20,
	}
	if quick {
		s.gradS = 200
		s.scaleN = []int{1000, 4000, 16000, 64000}
		s.scaleD = []int{5, 20, 80, 320}
		s.scaleS = []int{10, 100, 1000}
		s.scaleK = []int{1, 2, 8, 32}
		s.scaleKSamples = 50
		s.wvcmc = []wvcmcCase{{2000, 5, 200, 20}, {2000, 30, 200, 10}, {2000, 300, 400, 20}}
		s.parS = 100
	}
	return s
}
