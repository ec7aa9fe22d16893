package bench

// tinySizes are for tests of the code paths: everything small.
func tinySizes() *sizes {
	return &sizes{
		gibbs: []gibbsCase{
			{300, 5, "≥ 10,000 samples/s", func(k Kernel) bool { return k.Rate >= 10000 }, false},
			{200, 20, "≤ 1.5× the read of U", func(k Kernel) bool { return k.Ratio <= 1.5 }, true},
		},
		gradN: 200, gradD: 10, gradS: 20,
		latentN: 300,
		scaleN:  []int{100, 200}, scaleND: 5,
		scaleD: []int{3, 12}, scaleDN: 100,
		scaleS: []int{2, 8}, scaleSN: 100, scaleSD: 4,
		scaleK: []int{1, 3}, scaleKShard: 50, scaleKSamples: 5,
		sgldN: 300, sgldBatch: 10,
		wvcmc: []wvcmcCase{{300, 5, 30, 3}, {200, 30, 60, 3}, {100, 60, 80, 3}},
		parN:  300, parK: 3, parS: 5,
		specialN:    64,
		truncA:      []float64{-1, 0, 2},
		normalDraws: 300,
		burnin:      2,
	}
}
