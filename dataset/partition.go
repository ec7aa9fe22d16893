package dataset

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PartitionEqual splits the indices 0, …, n−1 into k disjoint shards
// Z_1, …, Z_K with Σ N_k = N (Sec. II): a uniform random permutation cut
// into consecutive pieces whose sizes differ by at most one (the first
// n mod k shards get ⌊n/k⌋+1 points). Every index is used exactly once. It
// returns an error if k < 1 or k > n.
func PartitionEqual(rng *rand.Rand, n, k int) ([][]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("dataset: cannot partition into %d workers (need K ≥ 1)", k)
	}
	if k > n {
		return nil, fmt.Errorf("dataset: cannot partition %d data points among %d workers (need K ≤ N)", n, k)
	}
	perm := rng.Perm(n)
	shards := make([][]int, k)
	start := 0
	for i := range shards {
		size := n / k
		if i < n%k {
			size++
		}
		shards[i] = perm[start : start+size : start+size]
		start += size
	}
	return shards, nil
}

// PartitionHeterogeneous splits a labelled data set among k workers with the
// class skew of the paper's Fig. 7 (Sec. VI-B, "Data Heterogeneity"):
// worker k = 1, …, K receives the fraction
//
//	(1/k^ζ) / Σ_{j=1}^K 1/j^ζ           of the class-1 points and
//	(1/(K−k+1)^ζ) / Σ_{j=1}^K 1/j^ζ     of the class-0 points,
//
// so worker 1 is class-1 heavy and worker K class-0 heavy; ζ = 0 is the
// homogeneous split. Shares are rounded by the largest-remainder method (ties
// to the lower worker index) so they sum exactly to the class counts. Which
// points of a class go to which worker is random (rng), and each shard is
// returned in random order. Every index is used exactly once.
//
// It returns an error if a label is not 0 or 1, k < 1, k > len(labels), ζ is
// negative or not finite, or some worker would receive no data at all.
func PartitionHeterogeneous(rng *rand.Rand, labels []float64, k int, zeta float64) ([][]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("dataset: cannot partition into %d workers (need K ≥ 1)", k)
	}
	if k > len(labels) {
		return nil, fmt.Errorf("dataset: cannot partition %d data points among %d workers (need K ≤ N)", len(labels), k)
	}
	if math.IsNaN(zeta) || math.IsInf(zeta, 0) || zeta < 0 {
		return nil, fmt.Errorf("dataset: heterogeneity exponent ζ = %v, want a finite ζ ≥ 0", zeta)
	}
	var ones, zeros []int
	for n, v := range labels {
		switch v {
		case 1:
			ones = append(ones, n)
		case 0:
			zeros = append(zeros, n)
		default:
			return nil, fmt.Errorf("dataset: label %d is %v, want 0 or 1", n, v)
		}
	}
	w1 := make([]float64, k)
	w0 := make([]float64, k)
	for i := range k {
		w1[i] = math.Pow(float64(i+1), -zeta)
		w0[k-1-i] = w1[i]
	}
	c1 := largestRemainder(len(ones), w1)
	c0 := largestRemainder(len(zeros), w0)
	for i := range k {
		if c1[i]+c0[i] == 0 {
			return nil, fmt.Errorf("dataset: heterogeneous partition with K = %d, ζ = %v gives worker %d no data (%d class-1 and %d class-0 points in all); use a smaller ζ or fewer workers", k, zeta, i+1, len(ones), len(zeros))
		}
	}
	rng.Shuffle(len(ones), func(i, j int) { ones[i], ones[j] = ones[j], ones[i] })
	rng.Shuffle(len(zeros), func(i, j int) { zeros[i], zeros[j] = zeros[j], zeros[i] })
	shards := make([][]int, k)
	for i := range shards {
		sh := make([]int, 0, c1[i]+c0[i])
		sh = append(sh, ones[:c1[i]]...)
		sh = append(sh, zeros[:c0[i]]...)
		ones, zeros = ones[c1[i]:], zeros[c0[i]:]
		rng.Shuffle(len(sh), func(a, b int) { sh[a], sh[b] = sh[b], sh[a] })
		shards[i] = sh
	}
	return shards, nil
}

// largestRemainder apportions total items in proportion to the positive
// weights w: each share is ⌊total·w_i/Σw⌋, and the items left over go one
// each to the largest fractional remainders (ties to the lower index), so the
// shares sum exactly to total.
func largestRemainder(total int, w []float64) []int {
	var sum float64
	for _, x := range w {
		sum += x
	}
	counts := make([]int, len(w))
	rem := make([]float64, len(w))
	left := total
	for i, x := range w {
		q := float64(total) * x / sum
		counts[i] = int(math.Floor(q))
		rem[i] = q - float64(counts[i])
		left -= counts[i]
	}
	order := make([]int, len(w))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
	// Floating-point rounding of the quotas can only make left slightly off
	// from the number of non-zero remainders; cycling keeps the sum exact.
	for i := 0; left > 0; i = (i + 1) % len(order) {
		counts[order[i]]++
		left--
	}
	for i := len(order) - 1; left < 0; i = (i - 1 + len(order)) % len(order) {
		if counts[order[i]] > 0 {
			counts[order[i]]--
			left++
		}
	}
	return counts
}
